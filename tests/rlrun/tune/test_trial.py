"""A trial's outcome (rlrun/tune/trial.py): a seed whose run.json or eval.csv is damaged fails the trial (its score
is over every seed), the error naming the seed, the file and the field; never a traceback."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.tune.report import _completed
from rlrun.tune.seed_runs import SeedRun
from rlrun.tune.trial import TrialRun
from tests import forked_commands

RECORD = {
    "status": "completed",
    "env_id": "GridWorld-v0",
    "seed": 0,
    "config_hash": "abc",
    "overrides": [],
    "total_timesteps": 128,
    "final": {"mean_return": 2.0, "success_rate": None},
}


def ended_trial(tmp_path: Path, records: list[dict[str, Any]], second_csv: str = "") -> TrialRun:
    """A trial of two seeds whose processes have ended, with these run.json and eval.csv files."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trial = TrialRun(optuna.create_study().ask(), tmp_path, len(records), [], "iqm")
    for run, record in zip(trial.runs, records, strict=True):
        run.folder.mkdir(parents=True)
        (run.folder / "run.json").write_text(json.dumps(record))
        (run.folder / "eval.csv").write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,2.0,0.0,,2.0,0\n")
        run.process = forked_commands.Popen(["-c", "pass"])
        run.process.wait()
    if second_csv:
        (trial.runs[1].folder / "eval.csv").write_text(second_csv)
    return trial


def test_completed_seeds_are_scored(tmp_path: Path) -> None:
    outcome = ended_trial(tmp_path, [RECORD, {**RECORD, "seed": 1}]).poll()
    assert outcome is not None and (outcome.state, outcome.value) == (TrialState.COMPLETE, 2.0)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ({"final": [2.0]}, "run.json's 'final' is [2.0], not null or an object"),
        ({"final": {"mean_return": "2.0"}}, "run.json's 'final' is {'mean_return': '2.0'}"),
        ({"final": None}, "says completed but has no 'final'"),
        ({"status": "done"}, "run.json's 'status' is 'done', not one of"),
        ({"seed": "one"}, "run.json's 'seed' is 'one', not an integer >= 0"),
    ],
    ids=["final-a-list", "mean-return-text", "no-final", "status", "seed"],
)
def test_a_damaged_run_json_fails_the_trial_naming_file_and_field(
    tmp_path: Path, damage: dict[str, Any], message: str
) -> None:
    outcome = ended_trial(tmp_path, [RECORD, {**RECORD, "seed": 1, **damage}]).poll()
    assert outcome is not None and outcome.state == TrialState.FAIL and outcome.error is not None
    assert outcome.error.startswith("seed 1: ") and message in outcome.error, outcome.error
    if "no 'final'" not in message:
        assert str(tmp_path / "seed-1" / "run.json") in outcome.error


def test_a_damaged_eval_csv_fails_the_trial_naming_file_and_line(tmp_path: Path) -> None:
    text = EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\nsixty,2.0,0.0,,2.0,0\n"
    outcome = ended_trial(tmp_path, [RECORD, {**RECORD, "seed": 1}], second_csv=text).poll()
    assert outcome is not None and outcome.state == TrialState.FAIL
    assert outcome.error == f"seed 1: {tmp_path / 'seed-1' / 'eval.csv'}: eval.csv line 3: 'timesteps' is 'sixty', " + (
        "not an integer >= 0"
    )


def test_a_damaged_validation_run_is_left_out_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = SeedRun(tmp_path / "seed-1000", 1000, [])
    assert _completed(run, "trained again") is None  # not started yet: no warning
    run.folder.mkdir()
    (run.folder / "run.json").write_text(json.dumps({**RECORD, "config_hash": 5}))
    with caplog.at_level(logging.WARNING, logger="rlrun.tune"):
        assert _completed(run, "trained again") is None
    [warning] = caplog.records
    assert "trained again" in warning.message and str(run.folder / "run.json") in warning.message
    assert "run.json's 'config_hash' is 5, not a non-empty string" in warning.message
    (run.folder / "run.json").write_text(json.dumps(RECORD))
    assert _completed(run, "trained again") == RECORD
