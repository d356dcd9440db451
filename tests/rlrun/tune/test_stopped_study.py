"""A stopped ``rlrun-tune`` says what its study kept and the command that continues it, as ``rlrun`` does of a run."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import optuna
import pytest

from rlrun.tune import command


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), SystemExit(143)], ids=["sigint", "sigterm"])
def test_a_stopped_study_says_what_it_kept_and_how_to_continue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, stop: BaseException
) -> None:
    study = optuna.create_study(direction="maximize")
    study.add_trial(optuna.trial.create_trial(value=0.5, user_attrs={"overrides": ["algo.gamma=0.9"]}))
    setup: Any = SimpleNamespace(
        name="gw-ppo", folder=tmp_path / "gw-ppo", tune={"report": False, "trials": 4, "seeds": 2}
    )

    def stopped(*_: object) -> None:
        raise stop

    monkeypatch.setattr(command, "open_or_report", lambda _: (study, None))
    monkeypatch.setattr(command, "optimize", stopped)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/rlrun-tune", "env=gridworld", "tune.trials=4"])
    with caplog.at_level(logging.INFO, logger="rlrun.tune"), pytest.raises(type(stop)):
        command.run(setup)
    [said] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("rlrun-tune stopped")]
    assert f"study gw-ppo in {tmp_path / 'gw-ppo'} keeps its finished trials, 1/4 finished (1 complete" in said
    assert said.endswith("The same command continues it: rlrun-tune env=gridworld tune.trials=4")
