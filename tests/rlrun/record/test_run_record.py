"""run.json is a live, truthful record: steps and seconds kept current while a run goes, when it fails
and when it is interrupted; ``fps`` of a resumed run counts the seconds of all its sessions."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from rlrun.record import run_record as record_module
from rlrun.run import heartbeat
from rlrun.run.evaluation import EvalResult, PeriodicEvaluation
from rlrun.run.train import resume, train
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.run.test_resume import Crash, crash_at

PPO_RUN = ["env=gridworld", "algo=ppo"]
STEPS = 512  # evaluations every 64 steps, snapshots every 128; 8 env copies


def read(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def updated(data: dict) -> datetime:
    return datetime.strptime(data["updated"], "%Y-%m-%dT%H:%M:%S%z")


def test_run_json_is_rewritten_at_each_evaluation_while_the_run_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict] = []
    original = PeriodicEvaluation._on_step

    def on_step(self: PeriodicEvaluation) -> bool:  # what run.json says at the step after each evaluation
        if self.num_timesteps in {72, 136}:
            seen.append(read(tmp_path))
        return original(self)

    monkeypatch.setattr(PeriodicEvaluation, "_on_step", on_step)
    train(config(*PPO_RUN, steps=STEPS), tmp_path)
    assert [(data["status"], data["timesteps"]) for data in seen] == [("running", 64), ("running", 128)]
    assert all(data["wall_s"] > 0 and data["fps"] == round(data["timesteps"] / data["wall_s"], 1) for data in seen)
    assert updated(seen[0]) <= updated(seen[1]) <= updated(read(tmp_path))


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


def test_a_long_stretch_without_evaluations_still_refreshes_run_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_S", 0.0)  # every step is past the heartbeat
    cfg = config(*PPO_RUN, steps=128)
    cfg.eval.every = cfg.snapshot.every = 10_000
    seen: list[int] = []
    original = record_module.RunRecord.save

    def save(self: record_module.RunRecord) -> None:
        seen.append(self.data["timesteps"])
        original(self)

    monkeypatch.setattr(record_module.RunRecord, "save", save)
    train(cfg, tmp_path)
    assert seen[1:6] == [8, 16, 24, 32, 40]  # after the record is created: every vec step of 8 copies
