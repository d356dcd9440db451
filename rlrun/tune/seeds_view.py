"""What ``rlrun-tune`` shows while seeds train (a trial's, or the validation's): in a terminal, a live view redrawn
in place below its other lines (the study's counts, then each running trial with a line per seed: its steps of its
budget, its last evaluation, its time left); without one, a line every ``progress_every`` seconds with the time
before it, naming each seed's steps (:mod:`rlrun.run.following`). The seeds' own lines go to their ``output.log``.

Each seed is read from its run folder (:mod:`rlrun.record.run_state`), never from the study's storage, so the view
reads files only and can be drawn from rich's own thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from rlrun.record.run_state import read_state
from rlrun.run.following import LiveLines, Ticker, clocked, duration, job_line, terminal
from rlrun.tune.seed_runs import SeedRun

log = logging.getLogger("rlrun.tune")

# the groups of seeds running now: each a title (``trial 3: algo.gamma=0.99``) and its seeds
Groups = Callable[[], Sequence[tuple[str, Sequence[SeedRun]]]]


def _steps(run: SeedRun) -> str:
    """``1,024/2,048 steps`` of a seed now."""
    state = read_state(run.folder)
    return f"{state.timesteps:,}/{'?' if state.budget is None else f'{state.budget:,}'} steps"


class SeedsView:
    """Inside a ``with`` block: the live view of the seeds ``groups()`` returns, in a terminal, else a line every
    ``every_s`` seconds (0: none). ``head`` is the view's first line (the study's counts), set as it changes."""

    def __init__(self, every_s: float, groups: Groups, head: str = "") -> None:
        self.groups, self.head = groups, head
        self.started = time.monotonic()
        self.live = LiveLines(self.view) if terminal() else None
        self.ticker = Ticker(0 if self.live else every_s, self.line, lambda text: log.info("%s", clocked(text)))

    def __enter__(self) -> SeedsView:
        if self.live is not None:
            self.live.start()
        self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ticker.stop()
        if self.live is not None:
            self.live.stop()  # taken down: the screen keeps the lines printed above it

    def view(self) -> list[str]:
        """The live lines: ``head``, then each group's title and a line per seed."""
        lines = [self.head] if self.head else []
        for title, runs in self.groups():
            lines.append(title)
            lines += [job_line(f"  seed {run.seed}", read_state(run.folder)) for run in runs]
        return lines

    def line(self) -> str | None:
        """``trial 3: seed 0 1,024/2,048 steps, seed 1 980/2,048 steps; 45 s so far``."""
        parts = []
        for title, runs in self.groups():
            seeds = ", ".join(f"seed {run.seed} {_steps(run)}" for run in runs)
            parts.append(f"{title.split(':')[0]}: {seeds or 'starting'}")
        so_far = f"{duration(time.monotonic() - self.started)} so far"
        return f"{'; '.join(parts)}; {so_far}" if parts else None
