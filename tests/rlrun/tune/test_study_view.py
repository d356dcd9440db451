"""Following ``rlrun-tune`` (rlrun/tune/seeds_view.py): in a terminal, the running trial and its seeds live (steps of
their budget, last evaluation, time left), taken down at the end; without one, a line every ``progress_every``
seconds while a trial's seeds train, with the time before it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests import forked_commands
from tests.rlrun.sweep_helpers import ROOT
from tests.rlrun.terminal_helpers import SLEEPY_RUN, run_in_terminal, screen

CLOCK = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "  # the time before a line written into a log
# Seeds that train for seconds after their first evaluation
SLOW_STUDY = [
    *SLEEPY_RUN,
    "tune.seeds=1",
    "tune.validate_seeds=0",
    "tune.pruner=none",
    "tune.study=view",
]


def _command(tmp_path: Path, *args: str) -> list[str]:
    """``rlrun-tune`` over the learning rate (a search space of the user's, in ``tmp_path/conf``)."""
    space = tmp_path / "conf" / "search_space" / "rate.yaml"
    space.parent.mkdir(parents=True, exist_ok=True)
    space.write_text(
        "# the learning rate only\nalgo.learning_rate: {type: float, low: 1.0e-4, high: 1.0e-2, log: true}\n"
    )
    return ["-m", "rlrun.cli.tune", f"--config-dir={tmp_path / 'conf'}", "search_space=rate", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(ROOT)}


def test_a_study_in_a_terminal_shows_its_trial_and_seeds_live_and_leaves_a_clean_screen(tmp_path: Path) -> None:
    status, written = run_in_terminal(
        _command(tmp_path, *SLOW_STUDY, "tune.trials=2", "progress_every=0"), tmp_path, _env()
    )
    assert status == 0, written[-3000:]
    before_end = written[: written.index("trial 0 complete")]  # what the terminal was shown while trial 0 trained
    assert re.search(r"study view: 0/2 finished", before_end) and "trial 0: algo.learning_rate=" in before_end
    steps = re.findall(r"  seed 0  ([\d,]+)/256 steps  last eval -?[\d.]+ at [\d,]+  about [\d.]+ s left", before_end)
    assert any(int(step.replace(",", "")) > 0 for step in steps), before_end[-2000:]  # the seeds' steps, live
    shown = screen(written)
    assert not any(line.startswith("study view: ") or "/256 steps" in line for line in shown), shown  # taken down
    assert [line for line in shown if re.match(r"trial \d complete: ", line)] and "preset written" in shown[-3], shown


def test_a_study_without_a_terminal_writes_timed_lines_while_a_trial_trains(tmp_path: Path) -> None:
    command = _command(tmp_path, *SLOW_STUDY, "tune.trials=1", "progress_every=0.3")
    done = forked_commands.run(command, cwd=tmp_path, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    started = next(i for i, line in enumerate(lines) if line.startswith("trial 0 started: "))
    ended = next(i for i, line in enumerate(lines) if line.startswith("trial 0 complete: "))
    trial = r"trial 0: seed 0 [\d,]+/(256|\?) steps; .* so far"
    during = [line for line in lines[started:ended] if re.fullmatch(CLOCK + trial, line)]
    assert during, done.stdout  # written while the trial's seeds trained
    assert all(re.match(CLOCK, line) for line in lines if "trial 0: seed" in line), done.stdout  # each with its time
