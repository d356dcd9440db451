"""Grouping runs (rlrun/table/groups.py): by config hash or --by keys, never mixing budgets; names; seeds planned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlrun.config.errors import UserError
from rlrun.table.write import write_tables
from tests.rlrun.table.helpers import make_run, read_rows


def test_groups_by_hash_never_mixing_budgets_and_by_keys(tmp_path: Path) -> None:
    lr1, lr2 = "algo.learning_rate=0.1", "algo.learning_rate=0.2"
    for seed in range(2):
        make_run(tmp_path / f"s/lr1/seed-{seed}", seed, 1.0 + seed, overrides=[lr1], config_hash="1" * 64)
        make_run(tmp_path / f"s/lr2/seed-{seed}", seed, 3.0 + seed, overrides=[lr2], config_hash="2" * 64)
        long = {"overrides": [lr1, "total_timesteps=2000"], "total_timesteps": 2000, "n_steps": 16}
        make_run(tmp_path / f"s/long/seed-{seed}", seed, 9.0, config_hash="3" * 64, **long)
    write_tables([tmp_path / "s"], tmp_path)
    rows = read_rows(tmp_path)
    assert list(rows) == [  # budgets differ within cartpole-ppo: every name shows its budget
        "cartpole-ppo algo.learning_rate=0.1 total_timesteps=1000",
        "cartpole-ppo algo.learning_rate=0.2 total_timesteps=1000",
        "cartpole-ppo algo.learning_rate=0.1 total_timesteps=2000",
    ]
    assert [rows[g]["return_mean"] for g in rows] == ["1.5", "3.5", "9.0"]

    # --by merges what the hash keeps apart, but never across total_timesteps
    write_tables([tmp_path / "s"], tmp_path, by=["algo.n_steps"])
    rows = read_rows(tmp_path)
    assert list(rows) == [
        "cartpole-ppo algo.n_steps=8 total_timesteps=1000",
        "cartpole-ppo algo.n_steps=16 total_timesteps=2000",
    ]
    assert rows["cartpole-ppo algo.n_steps=8 total_timesteps=1000"]["seeds_completed"] == "4"
    assert rows["cartpole-ppo algo.n_steps=8 total_timesteps=1000"]["return_mean"] == "2.5"
    with pytest.raises(UserError, match="algo.n_stepz"):
        write_tables([tmp_path / "s"], tmp_path, by=["algo.n_stepz"])


def test_a_group_of_one_config_is_named_by_env_and_algo(tmp_path: Path) -> None:
    make_run(tmp_path / "a/seed-0", 0, 1.0, overrides=["total_timesteps=1000", "eval.every=10", "progress_bar=false"])
    make_run(tmp_path / "a/seed-1", 1, 2.0, overrides=["total_timesteps=1000"])
    make_run(tmp_path / "b/seed-0", 0, 1.0, env=("pendulum", "Pendulum-v1"), algo="sac", overrides=["+algo.gamma=0.9"])
    write_tables([tmp_path], tmp_path)
    assert list(read_rows(tmp_path)) == ["cartpole-ppo", "pendulum-sac"]


def test_seeds_planned_come_from_sweep_json(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    for seed in range(2):
        make_run(sweep / f"cartpole-ppo/seed-{seed}", seed, 500.0)
    jobs = [{"folder": f"cartpole-ppo/seed-{k}", "overrides": [f"seed={k}"], "status": "completed"} for k in range(5)]
    jobs.append({"folder": "cartpole-a2c/seed-0", "overrides": ["algo=a2c"], "status": "not_started"})
    (sweep / "sweep.json").write_text(json.dumps({"sweep": "s", "jobs": jobs}))
    write_tables([sweep / "cartpole-ppo"], tmp_path / "out")  # a sub-folder of the sweep finds its sweep.json
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "5")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([1, 2], "it holds list, not an object"),
        (
            {"jobs": {"cartpole-ppo/seed-2": "completed"}},
            "its 'jobs' is {'cartpole-ppo/seed-2': 'completed'}, not a list of objects",
        ),
        ({"jobs": [{"folder": 3}]}, "a job's 'folder' is 3, not a folder name relative to the sweep's"),
        ({"jobs": [{"folder": "/etc"}]}, "a job's 'folder' is '/etc', not a folder name relative to the sweep's"),
    ],
    ids=["a-list", "jobs-a-mapping", "folder-a-number", "folder-absolute"],
)
def test_a_sweep_json_of_the_wrong_shape_is_ignored_with_one_warning_naming_the_field(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, data: object, reason: str
) -> None:
    sweep = tmp_path / "sweep"
    for seed in range(2):
        make_run(sweep / f"cartpole-ppo/seed-{seed}", seed, 500.0)
    (sweep / "sweep.json").write_text(json.dumps(data))
    write_tables([sweep], tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"ignoring {sweep / 'sweep.json'}: {reason}; seeds planned count the runs found"]
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "2")


def test_by_keys_holding_dates_and_mixed_keys_still_group(tmp_path: Path) -> None:
    for seed in range(2):
        run = make_run(tmp_path / f"s/seed-{seed}", seed, 1.0 + seed)
        text = (run / "config.yaml").read_text()
        (run / "config.yaml").write_text(text + "started: 2026-11-23\nodd: {1: a, b: c}\n")
    write_tables([tmp_path / "s"], tmp_path / "out", by=["started", "odd"])
    assert list(read_rows(tmp_path / "out")) == ['cartpole-ppo started="2026-11-23" odd={"1": "a", "b": "c"}']
