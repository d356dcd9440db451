"""eval.csv as tables and studies read it: one parser for both (:func:`rlrun.record.fields.parse_eval_csv`)."""

from __future__ import annotations

import pytest

from rlrun.record.fields import EvalRow, parse_eval_csv
from rlrun.record.formats import EVAL_CSV_HEADER


def test_rows_in_file_order_blank_lines_skipped_and_no_success_as_none() -> None:
    text = EVAL_CSV_HEADER + "200,1.5,0.1,,2.0,0\n\n100,-0.5,0.2,0.75,1.0,0\n"
    assert parse_eval_csv(text) == [EvalRow(200, 1.5, None), EvalRow(100, -0.5, 0.75)]


def test_columns_are_read_by_name() -> None:
    text = "wall_s,success_rate,std_return,mean_return,timesteps,extra\n1.0,1.0,0.0,2.5,64,x\n"
    assert parse_eval_csv(text) == [EvalRow(64, 2.5, 1.0)]


def test_a_header_alone_has_no_rows() -> None:
    assert parse_eval_csv(EVAL_CSV_HEADER) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "eval.csv lacks the header timesteps,mean_return,std_return,success_rate,wall_s"),
        ("timesteps,mean_return\n1,2\n", "eval.csv line 1: the header 'timesteps,mean_return' lacks one of"),
        (EVAL_CSV_HEADER + "100,nan?,0,,1,0\n", r"eval.csv line 2: 'mean_return' is 'nan\?', not a number"),
        (EVAL_CSV_HEADER + "\n", None),
    ],
    ids=["empty", "columns-missing", "bad-number", "blank-row"],
)
def test_what_cannot_be_read_says_why(text: str, message: str | None) -> None:
    if message is None:
        assert parse_eval_csv(text) == []
        return
    with pytest.raises(ValueError, match=message):
        parse_eval_csv(text)
