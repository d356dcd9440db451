"""The answers benchmark (benchmarks/speed/answers.py): its command, its tables, and the section it wrote into
BENCHMARKS.md."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from benchmarks import __main__ as runner
from benchmarks import common
from benchmarks.speed import answers

COMMAND = "python -m benchmarks.speed.answers --reps 5 --before 60233d3"


def _proc(cpu_s: float, returncode: int = 2) -> common.Proc:
    return common.Proc(wall_s=2 * cpu_s, cpu_s=cpu_s, peak_mb=100.0, returncode=returncode)


def _answers(after_s: float) -> dict[tuple[str, str], list[common.Proc]]:
    results = {(label, "before"): [_proc(2.5)] for label in answers.ANSWERS}
    results |= {(label, "after"): [_proc(after_s)] for label in answers.ANSWERS}
    reference = answers.REFERENCE[0]
    return results | {(reference, "before"): [_proc(0.4, 0)], (reference, "after"): [_proc(0.4, 0)]}


def test_the_command_is_registered_and_writes_its_section() -> None:
    module, arguments = runner.SCRIPTS["answers"]
    assert module == "benchmarks.speed.answers" and "answers" in runner.NAMES
    assert "--write" in arguments(argparse.Namespace(quick=False), Path())
    assert "--write" not in arguments(argparse.Namespace(quick=True), Path())


def test_each_answer_is_set_against_the_goal_before_and_after() -> None:
    table = answers.answers_table(_answers(0.5))
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [*answers.ANSWERS, "rlrun --cfg job"]
    assert "| `rlrun env=cartpol` | 2.50 | 0.50 | 0.20 | 1.25 | 2, 2 | met |" in table
    assert rows[-1] == "| `rlrun --cfg job` | 0.40 | 0.40 | 1.00 | 1.00 | 0, 0 | (reference) |"
    assert table.count("NOT met") == 0 and answers.answers_table(_answers(0.61)).count("NOT met") == 5


def test_the_trial_table_sets_fresh_seeds_against_preloaded_ones_round_by_round() -> None:
    table = answers.trials_table({"fresh": [_proc(20.0), _proc(24.0)], "preloaded": [_proc(10.0), _proc(12.0)]})
    assert (
        "| fresh | 22.00 | 44.00 | 2.00 | +2.75 |" in table and "| preloaded | 11.00 | 22.00 | 1.00 | +0.00 |" in table
    )


def test_the_section_names_its_command_the_goal_and_keeps_the_output() -> None:
    body = answers.section(COMMAND, "60233d3", "| `rlrun env=cartpol` | ... |")
    assert body.startswith("## Answers to mistakes, and a tuning trial's seeds")
    assert "at most 0.6 CPU-s" in body and "commit 60233d3" in body
    assert f"`{COMMAND}`" in body and "```\n| `rlrun env=cartpol` | ... |\n```" in body


def test_the_before_side_is_a_worktree_of_the_commit_with_its_own_configs(tmp_path: Path) -> None:
    with answers.worktree("HEAD") as tree:
        answers.check_imported_from(tree, tmp_path)  # rlrun, rlrun.conf and rlrun.envs all from the worktree
    assert not tree.exists()
    listed = subprocess.run(["git", "-C", str(common.ROOT), "worktree", "list"], capture_output=True, text=True)
    assert str(tree) not in listed.stdout


def test_benchmarks_md_holds_the_section_the_command_wrote() -> None:
    text = common.BENCHMARKS_MD.read_text()
    assert text.count("<!-- rlrun:begin answers -->") == 1 and text.count("<!-- rlrun:end answers -->") == 1
    body = text.split("<!-- rlrun:begin answers -->\n")[1].split("\n<!-- rlrun:end answers -->")[0]
    assert body.startswith("## Answers to mistakes, and a tuning trial's seeds")
    assert re.search(r"Output of `python -m benchmarks\.speed\.answers --reps \d+ --before \w+`:", body)
    number = r"\d+\.\d\d"
    for label in [*answers.ANSWERS, answers.REFERENCE[0]]:
        row = rf"\| `{re.escape(label)}` \| {number} \| {number} \| {number} \| {number} \| [\d/]+, [\d/]+ \| "
        assert re.search(row, body), label
    for start in answers.STARTS:
        assert re.search(rf"\| {start} \| {number} \| {number} \| {number} \| [+-]{number} \|", body), start
    assert "Machine: " in body and "1-minute load: " in body
