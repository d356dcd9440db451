"""Reading run folders (rlrun/table/runs.py): damaged runs are left out, each with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rlrun.table.runs import Damaged, read_run
from rlrun.table.write import write_tables
from tests.rlrun.table.helpers import HEADER, make_run, read_rows


def test_damaged_runs_are_left_out_with_one_warning_each(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = [make_run(tmp_path / f"sweep/seed-{seed}", seed, 10.0 * seed) for seed in range(3)]
    truncated = make_run(tmp_path / "sweep/seed-3", 3, 99.0)
    (truncated / "run.json").write_text((truncated / "run.json").read_text()[:40])
    edited = make_run(tmp_path / "sweep/seed-4", 4, 99.0)
    (edited / "run.json").write_text((edited / "run.json").read_text().replace('"seed": 4', '"seed": "four"'))
    no_eval = make_run(tmp_path / "sweep/seed-5", 5, 99.0)
    (no_eval / "eval.csv").unlink()
    make_run(tmp_path / "sweep/seed-6", 6, 99.0, status="failed")  # counted, never averaged
    make_run(tmp_path / "sweep/seed-7", 7, 99.0, status="running")
    make_run(tmp_path / "sweep/seed-8/attempts/1", 8, 99.0, status="failed")  # a failed attempt, run again

    write_tables([tmp_path / "sweep"], tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 3
    for folder, reason in ((truncated, "cannot be read"), (edited, "'seed'"), (no_eval, "no eval.csv")):
        assert sum(str(folder) in w and reason in w for w in warnings) == 1
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"], row["return_mean"]) == ("3", "5", "10.0")
    assert all(str(g) not in " ".join(warnings) for g in good)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "eval.csv lacks the header timesteps,mean_return,std_return,success_rate,wall_s"),
        (HEADER + "64,high,0.0,,1.0\n", "eval.csv line 2: 'mean_return' is 'high', not a number"),
        (b"\xff\xfe", "eval.csv cannot be parsed ('utf-8' codec can't decode"),
    ],
    ids=["empty", "bad-number", "not-text"],
)
def test_an_eval_csv_that_cannot_be_read_says_why(tmp_path: Path, text: str | bytes, reason: str) -> None:
    folder = make_run(tmp_path / "run", 0, 1.0)
    csv_path = folder / "eval.csv"
    csv_path.write_bytes(text) if isinstance(text, bytes) else csv_path.write_text(text)
    with pytest.raises(Damaged) as damaged:
        read_run(folder)
    assert str(damaged.value).startswith(reason)


@pytest.mark.parametrize(
    ("record", "config", "where"),
    [
        ({"overrides": [1, 2]}, {}, "run.json's 'overrides' is [1, 2], not a list of strings"),
        ({"env": ["a", "b"]}, {}, "run.json's 'env' is ['a', 'b'], not a name"),
        ({"final": {"mean_return": "high"}}, {}, "run.json's 'final' is"),
        ({"status": ["completed"]}, {}, "run.json's 'status' is ['completed'], not one of"),
        ({"versions": ["2.9"]}, {}, "run.json's 'versions' is ['2.9']"),
        ({"command": 5}, {}, "run.json's 'command' is 5, not a string or null"),
        ({"wall_s": "slow"}, {}, "run.json's 'wall_s' is 'slow', not a number or null"),
        ({}, {"algo": 5}, "config.yaml's 'algo' is 5, not a mapping"),
        ({"algo": None}, {"algo": 5}, "config.yaml's 'algo' is 5, not a mapping"),
        ({"algo": None}, {"algo": {"_target_": 5}}, "config.yaml's 'algo._target_' is not a class name"),
        ({}, {"env": "cartpole"}, "config.yaml's 'env' is 'cartpole', not a mapping"),
        ({}, ["not", "a", "mapping"], "config.yaml holds list, not a mapping"),
    ],
    ids=[
        "overrides-not-strings",
        "env-a-list",
        "final-not-a-number",
        "status-a-list",
        "versions-a-list",
        "command-a-number",
        "wall-s-text",
        "config-algo-a-number",
        "config-algo-a-number-no-record-algo",
        "config-algo-target-a-number",
        "config-env-text",
        "config-a-list",
    ],
)
def test_a_field_of_the_wrong_type_leaves_its_run_out_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, record: dict, config: dict | list, where: str
) -> None:
    for seed in range(2):
        make_run(tmp_path / f"sweep/seed-{seed}", seed, 10.0 * seed)
    damaged = make_run(tmp_path / "sweep/seed-2", 2, 99.0)
    data = json.loads((damaged / "run.json").read_text())
    (damaged / "run.json").write_text(json.dumps({**data, **record}))
    if config:
        old = yaml.safe_load((damaged / "config.yaml").read_text())
        (damaged / "config.yaml").write_text(yaml.safe_dump({**old, **config} if isinstance(config, dict) else config))

    write_tables([tmp_path / "sweep"], tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and str(damaged) in warnings[0] and where in warnings[0], warnings
    rows = read_rows(tmp_path / "out")
    assert list(rows) == ["cartpole-ppo"] and (
        rows["cartpole-ppo"]["seeds_completed"],
        rows["cartpole-ppo"]["return_mean"],
    ) == ("2", "5.0")


def test_runs_in_folders_whose_names_start_with_a_dot_are_read(tmp_path: Path) -> None:
    make_run(tmp_path / "sweeps/.old/cartpole-ppo/seed-0", 0, 5.0)
    make_run(tmp_path / "sweeps/new/cartpole-ppo/seed-1", 1, 7.0)
    hydra = tmp_path / "sweeps/new/cartpole-ppo/.hydra"  # Hydra's record is never taken for a run
    hydra.mkdir()
    (hydra / "config.yaml").write_text("seed: 0\n")
    (hydra / "run.json").write_text("{}")
    write_tables([tmp_path / "sweeps"], tmp_path / "out")
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["return_mean"]) == ("2", "6.0")
