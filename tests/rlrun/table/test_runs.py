"""Reading run folders (rlrun/table/runs.py): damaged runs are left out, each with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

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
        (HEADER + "64,high,0.0,,1.0\n", "eval.csv cannot be parsed (could not convert string to float: 'high')"),
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
