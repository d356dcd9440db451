"""Test modules share helpers through helper modules (``tests/rlrun/helpers.py`` and friends) or conftest fixtures,
never by importing another ``test_*`` module: importing one runs its module-level code and ties two test files
together, so moving or renaming a test breaks an unrelated one. The benchmarks import nothing of the tests either:
what both use lives in ``benchmarks/``."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def imported_modules(tree: ast.Module) -> list[tuple[int, str]]:
    """Every absolute module an import of ``tree`` names, with its line (``from tests.rlrun import test_main``
    names ``tests.rlrun`` and ``tests.rlrun.test_main``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def is_test_module(module: str) -> bool:
    """Whether ``module`` is a ``test_*.py`` file of this repository."""
    parts = module.split(".")
    return parts[-1].startswith("test_") and ROOT.joinpath(*parts).with_suffix(".py").is_file()


def imports_of_test_modules(path: Path) -> list[str]:
    """The imports of ``path`` that reach a ``test_*`` module of this repository, as ``file:line: module``."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for line, module in imported_modules(tree)
        if is_test_module(module)
    ]


def test_no_test_module_imports_another_test_module() -> None:
    wrong = [entry for path in sorted(TESTS.rglob("*.py")) for entry in imports_of_test_modules(path)]
    assert wrong == [], "move what these import into a helpers module or a conftest fixture:\n" + "\n".join(wrong)


def test_the_benchmarks_import_nothing_of_the_tests() -> None:
    benchmarks = ROOT / "benchmarks"
    sources = [p for p in sorted(benchmarks.rglob("*.py")) if not p.relative_to(benchmarks).parts[0].startswith(".")]
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sources
        for line, module in imported_modules(ast.parse(path.read_text(), str(path)))
        if module.split(".")[0] == "tests"
    ]
    assert wrong == [], "move what these import into benchmarks/ (tests may import it from there):\n" + "\n".join(wrong)
