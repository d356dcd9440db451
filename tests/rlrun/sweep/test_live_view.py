"""A sweep in a terminal shows its running jobs live (rlrun/sweep/jobs_progress.py through rlrun/run/following.py):
a line per running job with its steps of its budget, its last evaluation and its time left, below the jobs' end
lines, redrawn in place and taken down at the end, so the screen keeps only the lines printed."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.rlrun.sweep_helpers import ROOT
from tests.rlrun.terminal_helpers import SLEEPY_RUN, run_in_terminal, screen

# Two jobs at once, each a run that trains for seconds after its first evaluation
SLOW_SWEEP = [
    *SLEEPY_RUN,
    "seed=0,1",
    "hydra/launcher=joblib",
    "hydra.launcher.n_jobs=2",
    "sweep=live",
    "progress_every=0",
]


def test_a_sweep_in_a_terminal_shows_its_jobs_live_and_leaves_a_clean_screen(tmp_path: Path) -> None:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(ROOT)}
    status, written = run_in_terminal(["-m", "rlrun", "-m", *SLOW_SWEEP], tmp_path, env)
    assert status == 0, written[-3000:]
    before_end = written[: written.index("[1/2] ")]  # what the terminal was shown before the first job ended
    assert re.search(r"sweep: 0 completed, 0 failed, 2 running, 0 waiting", before_end), before_end[-2000:]
    steps = re.findall(r"/seed-[01]  ([\d,]+)/256 steps  last eval -?[\d.]+ at [\d,]+  about [\d.]+ s left", before_end)
    assert any(int(step.replace(",", "")) > 0 for step in steps), before_end[-2000:]  # the jobs' steps, live
    shown = screen(written)
    assert not any(line.startswith("sweep: ") or "/256 steps" in line for line in shown), shown  # taken down
    assert [line[:6] for line in shown if re.match(r"\[\d/2\] ", line)] == ["[1/2] ", "[2/2] "], shown
    assert re.match(r"sweep .*live \(joblib launcher\): 2 jobs: 2 completed$", shown[-3] if len(shown) > 2 else ""), (
        shown
    )
