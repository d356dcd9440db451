"""Evaluation episodes cut at the evaluation cap (an env without a time limit, rlrun/make/episode_cap.py) are said
where the results are: each evaluation's line, the final line, eval.csv's ``capped`` column; and warned where an
episode really ran on, not for every env that declares no time limit. Older eval.csv files, without the column,
still read and resume."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rlrun.record.fields import eval_csv_rows, parse_eval_csv
from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.run import evaluation
from rlrun.run.resume_state import rewind_eval_csv
from rlrun.run.training import train
from tests.rlrun.helpers import QUICK_BUDGET, compose_config

RUN = ["algo=ppo", "~tuned", "algo.n_steps=32", "algo.batch_size=32", "algo.policy_kwargs={net_arch:[8]}"]
ENDLESS = ["env=gym", "env.id=tests.rlrun.third_party_envs:Endless-v0", *RUN, *QUICK_BUDGET, "eval.n_envs=1"]
ENDS_ITSELF = ["env=gym", "env.id=pkgtest/EndsItself-v0", "env.packages=[tests.rlrun.checks.package_envs]"]
TIME_LIMIT_WARNING = "declares no time limit"


def test_episodes_cut_at_the_cap_are_said_in_the_lines_eval_csv_and_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    evaluation._warn_capped.cache_clear()  # warned once per process: this test needs the first
    with caplog.at_level(logging.INFO, logger="rlrun"):
        final = train(compose_config(*ENDLESS), tmp_path)
    assert final["capped"] == 1
    [row] = eval_csv_rows((tmp_path / "eval.csv").read_text())
    assert row["timesteps"] == "64" and row["capped"] == "1"
    lines = [line for line in caplog.messages if "evaluation" in line and "mean return" in line]
    assert len(lines) == 2 and all("1 of 1 cut at 1,000 steps" in line for line in lines)  # periodic, final
    [warning] = [line for line in caplog.messages if TIME_LIMIT_WARNING in line]
    assert "ran 1000 steps without ending" in warning and "env.max_episode_steps=N" in warning
    assert evaluation.summary_text(final).endswith(", 1 of 1 cut at 1,000 steps")  # the final line's words


def test_an_env_whose_episodes_end_by_themselves_is_not_warned_about_a_time_limit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rlrun"):
        final = train(compose_config(*ENDS_ITSELF, *RUN, *QUICK_BUDGET), tmp_path)
    assert final["capped"] == 0
    assert not [line for line in caplog.messages if "time limit" in line]
    assert "cut at" not in evaluation.summary_text(final)
    [row] = eval_csv_rows((tmp_path / "eval.csv").read_text())
    assert row["capped"] == "0"


def test_an_eval_csv_written_before_the_capped_column_reads_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    path.write_text("timesteps,mean_return,std_return,success_rate,wall_s\n64,1.5,0.0,,1.0\n128,2.5,0.0,1.0,2.0\n")
    assert [row.timesteps for row in parse_eval_csv(path.read_text())] == [64, 128]
    assert [row["capped"] for row in eval_csv_rows(path.read_text())] == ["", ""]  # not known
    rewind_eval_csv(path, 64)  # a resume writes today's header: its new rows hold the column
    assert path.read_text() == EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,\n"
