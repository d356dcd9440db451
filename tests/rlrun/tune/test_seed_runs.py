"""A trial's seed runs (rlrun/tune/seed_runs.py): what a seed reports is read from its eval.csv as it is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rlrun.record.fields import EvalRow
from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.tune.seed_runs import SeedRun


def test_a_seed_reports_only_the_complete_rows_of_its_eval_csv(tmp_path: Path) -> None:
    run = SeedRun(tmp_path, 0, [])
    run.process = subprocess.Popen([sys.executable, "-c", "pass"])
    run.process.wait()
    assert run.poll() == 0 and run.rows == []  # no eval.csv yet
    (tmp_path / "eval.csv").write_text("timesteps,mean_return,std_return,succ")
    assert run.poll() == 0 and run.rows == []  # the header is being written
    (tmp_path / "eval.csv").write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,2.")
    assert run.poll() == 0 and run.rows == [EvalRow(64, 1.5, None)]  # the second row is being written
    (tmp_path / "eval.csv").write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,2.5,0.0,1.0,2.0,0\n")
    assert run.poll() == 0 and run.rows == [EvalRow(64, 1.5, None), EvalRow(128, 2.5, 1.0)]


def test_a_damaged_eval_csv_row_is_reported_naming_the_file_and_line(tmp_path: Path) -> None:
    run = SeedRun(tmp_path, 0, [])
    run.process = subprocess.Popen([sys.executable, "-c", "pass"])
    run.process.wait()
    (tmp_path / "eval.csv").write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n")
    assert run.poll() == 0 and run.rows == [EvalRow(64, 1.5, None)] and run.damaged is None
    (tmp_path / "eval.csv").write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,[],0.0,,1.0,0\n")
    assert run.poll() == 0 and run.rows == [EvalRow(64, 1.5, None)]  # the rows read before are kept
    assert run.damaged == f"{tmp_path / 'eval.csv'}: eval.csv line 3: 'mean_return' is '[]', not a number"
