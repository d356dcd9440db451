"""The examples in the docstrings of ``rlrun.envs`` run, imported by the package name.

``pytest --doctest-modules`` imports a file by its path, which from a checkout makes ``envs/`` the top-level
package ``envs``: a second copy of every module. Here each module is imported as ``rlrun.envs.<name>`` and its
examples are run by the standard library's doctest.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
import rlrun.envs

MODULES = sorted(["rlrun.envs", *(m.name for m in pkgutil.walk_packages(rlrun.envs.__path__, prefix="rlrun.envs."))])
# Modules whose docstrings show how to use them; each must keep at least one example.
WITH_EXAMPLES = {"rlrun.envs", "rlrun.envs.batched", "rlrun.envs.wrappers"}


def examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, name)  # each with a copy of the module's globals
    return [test for test in tests if test.examples and test.filename == module.__file__]


def test_the_modules_with_examples() -> None:
    assert {name for name in MODULES if examples(name)} == WITH_EXAMPLES


@pytest.mark.parametrize("name", sorted(WITH_EXAMPLES))
def test_examples_run(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in examples(name):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0
    assert results.failed == 0, capsys.readouterr().out
