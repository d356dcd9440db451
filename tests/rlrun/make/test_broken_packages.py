"""An installed env package that fails to import (safety-gymnasium under a Gymnasium without the module it imports)
is said with its error where a user looks (issue 53): ``rlrun-envs --all`` lists it, and ``rlrun``/``rlrun-check``
on one of its ids name it instead of calling it installed (rlrun/make/gym_make.py)."""

from __future__ import annotations

import pytest

from rlrun.cli import envs
from rlrun.config.errors import UserError
from rlrun.make import families, gym_make
from rlrun.run.check_suite import run_checks
from tests.rlrun.helpers import compose_check

BROKEN = "tests.rlrun.make.broken_package"
ERROR = "ModuleNotFoundError: No module named 'gymnasium.envs.no_such_module'"


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken package among those rlrun tries, registering ids that start with ``Broken-``."""
    monkeypatch.setattr(gym_make, "THIRD_PARTY", (*gym_make.THIRD_PARTY, BROKEN))
    monkeypatch.setattr(gym_make, "THIRD_PARTY_IDS", {**gym_make.THIRD_PARTY_IDS, "Broken-": BROKEN})


@pytest.mark.usefixtures("broken")
def test_rlrun_envs_all_lists_a_package_that_fails_to_import_with_its_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(gym_make, "THIRD_PARTY", (BROKEN,))  # tried alone: no family's import to wait for
    monkeypatch.setattr(families, "FAMILIES", {})
    assert gym_make.import_failures() == {BROKEN: ERROR}
    monkeypatch.setattr(envs, "list_envs", lambda **_: [])  # the envs' blocks: tests/rlrun/cli/test_envs.py
    envs.main(["--all", "Broken-"])
    printed = capsys.readouterr().out
    assert f"{BROKEN} (installed, fails to import: its ids are not listed)" in printed and ERROR in printed


@pytest.mark.usefixtures("broken")
def test_rlrun_check_on_an_id_of_a_broken_package_names_its_import_error() -> None:
    cfg = compose_check("env=gym", "env.id=Broken-Task-v0")
    with pytest.raises(UserError) as refused:
        run_checks(cfg, with_algo=False)
    assert "is installed but fails to import" in str(refused.value.fix) and ERROR in str(refused.value.fix)
    assert "it is installed, name the module" not in str(refused.value.fix)
