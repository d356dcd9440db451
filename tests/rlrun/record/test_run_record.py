"""run.json is a truthful record: the steps and seconds of a failed run; ``fps`` of a resumed run counts the seconds of
all its sessions (kept current while a run goes: run/test_heartbeat.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rlrun.run.evaluation import EvalResult, PeriodicEvaluation
from rlrun.run.training import resume, train
from tests.rlrun.helpers import read_run_json as read
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.resume_helpers import Crash, crash_at

PPO_RUN = ["env=gridworld", "algo=ppo"]
STEPS = 512  # evaluations every 64 steps, snapshots every 128; 8 env copies


def test_a_failed_run_records_its_steps_and_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crash_at(monkeypatch, 300)
    with pytest.raises(Crash):
        train(config(*PPO_RUN, steps=STEPS), tmp_path)
    data = read(tmp_path)
    assert data["status"] == "failed" and data["error"].startswith("Crash")
    assert data["timesteps"] == 304  # the step it failed at (the first vec step of 8 copies past 300)
    assert data["wall_s"] > 0 and data["fps"] == round(304 / data["wall_s"], 1)


def test_fps_after_a_resume_counts_the_seconds_of_every_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = PeriodicEvaluation.run_evaluation

    def slow_evaluation(self: PeriodicEvaluation) -> EvalResult:
        time.sleep(0.5)  # the first session takes longer than the whole resumed one
        return original(self)

    with monkeypatch.context() as patch:
        patch.setattr(PeriodicEvaluation, "run_evaluation", slow_evaluation)
        crash_at(patch, 300)
        with pytest.raises(Crash):
            train(config(*PPO_RUN, steps=STEPS), tmp_path)
    resume(tmp_path, progress_bar="false")
    data = read(tmp_path)
    assert data["status"] == "completed" and data["timesteps"] == STEPS
    assert data["wall_s"] > 2.0  # the four slow evaluations up to the snapshot at 256 are part of the run
    assert data["fps"] == round(STEPS / data["wall_s"], 1)
