"""Writing the tables (rlrun/table/write.py): byte-identical files, and a real two-seed sweep read back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from omegaconf import DictConfig
from scipy import stats

from rlrun.table.write import write_tables
from tests.rlrun.table.helpers import make_run, read_json, read_rows


def test_two_calls_give_the_same_bytes(tmp_path: Path) -> None:
    for seed, score in enumerate([1.0, 4.0, 2.0]):
        make_run(tmp_path / f"runs/cartpole-ppo/seed-{seed}", seed, score)
        make_run(
            tmp_path / f"runs/gw-dqn/seed-{seed}",
            seed,
            score / 4,
            success=score / 4,
            env=("gw", "rlrun/GridWorld-v0"),
            algo="dqn",
        )
    files = ("table.md", "table.csv", "table.json", "curves.png")
    write_tables([tmp_path / "runs"], tmp_path / "one")
    write_tables([tmp_path / "runs"], tmp_path / "two")
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert (tmp_path / "one/curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_real_two_seed_sweep_matches_its_run_files(tiny_config: Callable[..., DictConfig], tmp_path: Path) -> None:
    from rlrun.run.training import train

    sweep = tmp_path / "sweep"
    for seed in range(2):
        overrides = ["env=gridworld", "algo=ppo", f"seed={seed}"]
        cfg = tiny_config(*overrides)
        cfg.seed = seed
        meta = {"env": "gridworld", "algo": "ppo", "overrides": overrides, "command": "rlrun -m seed=0,1"}
        train(cfg, sweep / f"gridworld-ppo/seed-{seed}", meta)
    write_tables([sweep], sweep)

    records = [json.loads((sweep / f"gridworld-ppo/seed-{k}/run.json").read_text()) for k in range(2)]
    returns = [r["final"]["mean_return"] for r in records]
    successes = [r["final"]["success_rate"] for r in records]
    row = read_rows(sweep)["gridworld-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "2")
    assert float(row["return_mean"]) == np.mean(returns) and float(row["return_std"]) == np.std(returns)
    assert float(row["success_iqm"]) == stats.trim_mean(successes, 0.25)
    assert float(row["wall_s"]) == np.median([r["wall_s"] for r in records])
    document = read_json(sweep)
    assert [run["return"] for run in document["groups"][0]["runs"]] == returns
    assert document["provenance"]["runs"]["commands"] == ["rlrun -m seed=0,1"]
    assert document["provenance"]["runs"]["versions"]["stable_baselines3"] == [
        records[0]["versions"]["stable_baselines3"]
    ]


def test_the_footnote_states_rliables_iqm_with_how_many_runs_count(tmp_path: Path) -> None:
    for seed, score in enumerate([1.0, 2.0, 3.0, 4.0, 5.0, 100.0]):
        make_run(tmp_path / f"runs/cartpole-ppo/seed-{seed}", seed, score)
    write_tables([tmp_path / "runs"], tmp_path / "out")
    text = " ".join((tmp_path / "out" / "table.md").read_text().split())  # its prose is wrapped
    assert "`scipy.stats.trim_mean(scores, 0.25)`: the mean after 25% of the runs are trimmed from each end" in text
    assert "4 of 6 runs count" in text and "middle 50%" not in text
    assert read_json(tmp_path / "out")["rows"][0]["return_iqm"] == stats.trim_mean([1, 2, 3, 4, 5, 100], 0.25) == 3.5
