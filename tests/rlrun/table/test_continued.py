"""Tables of continued runs (``resume=RUN total_timesteps=N``): a run counts at its last budget, with its config
there, and ``rlrun-table`` says when a group mixes continued and straight runs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rlrun.cli import table
from rlrun.run.training import resume, train
from tests.rlrun.helpers import TINY_RUN, compose_config

PPO = [o for o in TINY_RUN if not o.startswith("total_timesteps=")]  # GridWorld PPO, evaluations every 128 steps


def test_a_continued_run_is_grouped_at_its_last_budget_and_a_mixed_group_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs = tmp_path / "runs"
    train(compose_config(*PPO, "total_timesteps=256", "seed=0"), runs / "continued")
    resume(runs / "continued", "false", total_timesteps=512)
    train(compose_config(*PPO, "total_timesteps=512", "seed=1"), runs / "straight")
    train(compose_config(*PPO, "total_timesteps=256", "seed=2"), runs / "short")

    with caplog.at_level(logging.WARNING, logger="rlrun.table"):
        table.main([str(runs), "--out", str(tmp_path / "table")])
    groups = {g["total_timesteps"]: g for g in json.loads((tmp_path / "table/table.json").read_text())["groups"]}
    assert sorted(groups) == [256, 512]
    assert [r["folder"] for r in groups[512]["runs"]] == ["../runs/continued", "../runs/straight"]
    assert [r["seed"] for r in groups[256]["runs"]] == [2]  # the continued run is not counted at its first budget
    mixed = [r.getMessage() for r in caplog.records if "mixes" in r.getMessage()]
    assert len(mixed) == 1
    assert "1 continued run(s) (first trained to 256 steps, then continued to 512)" in mixed[0]
    assert "1 run(s) trained straight to 512 steps" in mixed[0] and groups[512]["group"] in mixed[0]
