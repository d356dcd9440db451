"""Following a run without a terminal: a line every ``progress_every`` seconds whatever the run is doing, a periodic
and the final evaluation included, each with the time before it (rlrun/run/progress.py, rlrun/run/following.py);
and in a terminal, a progress bar that says what it counts and its speed."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress as RichProgress

from rlrun.run.progress import bar_columns
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink

CLOCK = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "  # the time before a line written into a log
SLOW = "env.id=tests.rlrun.run.slow_envs:slow/Sleepy-v0"  # each step sleeps 10 ms, episodes of 10 steps


def test_a_line_is_written_during_each_evaluation_with_its_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = shrink(compose_config("env=gym", SLOW, "algo=ppo", "env.n_envs=1", "eval.n_envs=1"), 64)
    cfg.eval.every, cfg.eval.episodes, cfg.eval.final_episodes = 64, 4, 4  # 40 steps each: 0.4 s or more
    cfg.progress_every = 0.1
    caplog.set_level(logging.INFO, logger="rlrun")
    train(cfg, tmp_path / "run")
    messages = caplog.messages
    result = next(i for i, m in enumerate(messages) if m.startswith("evaluation at step 64:"))
    during = [
        m
        for m in messages[:result]
        if re.fullmatch(CLOCK + r"step 64/64 \(100%\): evaluating \(4 episodes\), .* so far", m)
    ]
    assert during, messages  # written while the periodic evaluation ran, before its result
    started = messages.index("final evaluation: 4 episodes ...")
    final = [m for m in messages[started:] if re.fullmatch(CLOCK + r"final evaluation \(4 episodes\): .* so far", m)]
    assert final, messages
    timed = [m for m in messages if "so far" in m or "steps/s, about" in m and not m.startswith("evaluation")]
    assert all(re.match(CLOCK, m) for m in timed), timed  # each line written as time passes has its time


def test_the_progress_bar_says_steps_and_their_speed() -> None:
    now = [0.0]
    bar = RichProgress(*bar_columns(), get_time=lambda: now[0], auto_refresh=False)
    task = bar.add_task("training", total=10_000)
    bar.update(task, completed=1000)
    now[0] = 2.0
    bar.update(task, completed=3000)  # 2,000 steps in 2 s
    console = Console(file=io.StringIO(), width=150, force_terminal=True, color_system=None)
    console.print(bar.make_tasks_table(bar.tasks))
    shown = console.file.getvalue()
    assert "training" in shown and "3000/10000 steps" in shown and "1,000 steps/s" in shown, shown
