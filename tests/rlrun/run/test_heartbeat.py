"""A running run's ``run.json`` is kept current (rlrun/run/heartbeat.py): rewritten after each evaluation, and at
least every HEARTBEAT_S seconds between them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from rlrun.record import run_record
from rlrun.run import heartbeat
from rlrun.run.evaluation import PeriodicEvaluation
from rlrun.run.training import train
from tests.rlrun.helpers import read_run_json as read
from tests.rlrun.kill_during_snapshot import config

PPO_RUN = ["env=gridworld", "algo=ppo"]
STEPS = 512  # evaluations every 64 steps, snapshots every 128; 8 env copies


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


def test_a_long_stretch_without_evaluations_still_refreshes_run_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_S", 0.0)  # every step is past the heartbeat
    cfg = config(*PPO_RUN, steps=128)
    cfg.eval.every = cfg.snapshot.every = 10_000
    seen: list[int] = []
    original = run_record.RunRecord.save

    def save(self: run_record.RunRecord) -> None:
        seen.append(self.data["timesteps"])
        original(self)

    monkeypatch.setattr(run_record.RunRecord, "save", save)
    train(cfg, tmp_path)
    assert seen[1:6] == [8, 16, 24, 32, 40]  # after the record is created: every vec step of 8 copies
