"""What a run tells the user as it goes, in a terminal or in any log (a cluster job's, ``nohup``, ``| tee``, CI).

One line per periodic evaluation (step, mean return, success rate, steps/s, time left); without a progress bar,
a line every ``progress_every`` seconds whatever the run is doing (training, a periodic evaluation, the final
evaluation), written by a thread of its own (:class:`rlrun.run.following.Ticker`) and with the time before it
where the output is not a terminal; the final evaluation announced before it starts and its result after. In a
terminal the progress bar is drawn (capped at ``total_timesteps``, in steps with their speed) with the lines above
it. The lines go through the ``rlrun`` logger, so ``rlrun.log`` holds them too; a sweep's job writes them to its
own log only (the sweep's process prints the sweep's progress, :mod:`rlrun.sweep.jobs_progress`).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text
from stable_baselines3.common.callbacks import BaseCallback

from rlrun.run import evaluation, following
from rlrun.run.evaluation import EvalResult
from rlrun.run.following import duration

log = logging.getLogger("rlrun")


def episodes_word(count: int) -> str:
    """``1 episode``, ``50 episodes``."""
    return f"{count} episode" if count == 1 else f"{count} episodes"


def say(message: str, console: bool = True, clock: bool = False) -> None:
    """Log ``message`` at INFO through the ``rlrun`` logger; ``console=False``: to the log files only (a sweep's
    job, whose console is the sweep's terminal); ``clock``: the console's line has the time before it where the
    console is not a terminal (:func:`rlrun.run.following.clocked`; the log files have their own)."""
    if console and not (clock and not following.terminal()):
        log.info(message)
        return
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, message, (), None)
    for handler in _file_handlers():
        if record.levelno >= handler.level:
            handler.handle(record)
    if console:
        stamped = log.makeRecord(log.name, logging.INFO, __file__, 0, following.clocked(message), (), None)
        for other in dict.fromkeys(h for logger in (log, logging.getLogger()) for h in logger.handlers):
            if not isinstance(other, logging.FileHandler) and stamped.levelno >= other.level:
                other.handle(stamped)


def _file_handlers() -> Iterator[logging.FileHandler]:
    """The file handlers of the ``rlrun`` logger and the root, each once (a sweep's job gives the ``rlrun`` logger
    the root's own: :func:`rlrun.record.logs.to_log_files`)."""
    handlers = (h for logger in (log, logging.getLogger()) for h in logger.handlers)
    yield from dict.fromkeys(h for h in handlers if isinstance(h, logging.FileHandler))


def result_text(result: EvalResult) -> str:
    """``mean return 0.812 ± 0.100 over 10 episodes, success rate 0.90`` (:func:`rlrun.run.evaluation.summary_text`:
    also how many episodes were cut at the evaluation cap)."""
    return evaluation.summary_text(result.summary())


def evaluation_line(step: int, result: EvalResult) -> str:
    """``evaluation at step 10,240: mean return ...`` (:func:`result_text`)."""
    return f"evaluation at step {step:,}: {result_text(result)}"


STALLED_S = 5.0  # no env step for this long, with no evaluation announced: the line says so


class StepsPerSecond(ProgressColumn):
    """The bar's speed: ``640 steps/s``."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("– steps/s" if speed is None else f"{speed:,.0f} steps/s")


def bar_columns() -> tuple[ProgressColumn, ...]:
    """``training ━━━━━━ 4096/10000 steps 640 steps/s 0:00:07 0:00:09``: what the run does, the bar, the steps of
    the budget, their speed, the time so far and the time left."""
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps"),
        StepsPerSecond(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )


@dataclass(frozen=True)
class Doing:
    """What a run is doing since when (``time.monotonic()``): ``training``, ``evaluating`` (a periodic evaluation
    at ``step``), ``final evaluation`` or ``saving``; ``episodes`` of an evaluation."""

    what: str
    since: float
    step: int = 0
    episodes: int = 0


class Progress(BaseCallback):
    """Progress bar in a terminal, plain lines otherwise; and the line of each periodic evaluation.

    ``bar``: draw rich's progress bar (only on a terminal; a bar cannot be drawn in a file, so without one the
    plain lines are printed instead); ``every_s``: seconds between plain lines (0: none), written whatever the run
    is doing (:meth:`line`); ``console``: False in a sweep's job, whose lines go to its log only.
    """

    def __init__(self, total_timesteps: int, every_s: float, bar: bool, console: bool = True) -> None:
        super().__init__()
        self.total = total_timesteps
        self.every_s = every_s
        self.bar = bar and sys.stdout.isatty()
        self.console = console
        self.first_step = 0
        self.started = self.last_step_at = time.monotonic()
        self.doing = Doing("training", self.started)
        self._ticker = following.Ticker(every_s, self.line, lambda text: say(text, self.console, clock=True))
        self._bar: Any = None
        self._task: Any = None
        self._console = following.ConsoleRedirect()

    def _on_training_start(self) -> None:
        self.first_step = self.num_timesteps
        self.started = self.last_step_at = time.monotonic()
        self.doing = Doing("training", self.started)
        if self.bar:
            self._start_bar()
        else:
            self._ticker.start()

    def _on_step(self) -> bool:
        self.last_step_at = time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.num_timesteps, self.total))
        return True

    def _on_training_end(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.num_timesteps, self.total))

    def close(self) -> None:
        """Stop the plain lines; take the progress bar down, if it is drawn, and give the console handlers their
        streams back."""
        self._ticker.stop()
        if self._bar is not None:
            self._bar.stop()
            self._console.restore()
            self._bar = None

    def line(self) -> str:
        """The plain line of now: what the run is doing, how far and how long."""
        doing, now = self.doing, time.monotonic()
        so_far = f"{duration(now - doing.since)} so far"
        if doing.what == "evaluating":
            return f"{self._steps(doing.step)}: evaluating ({episodes_word(doing.episodes)}), {so_far}"
        if doing.what == "final evaluation":
            return f"final evaluation ({episodes_word(doing.episodes)}): {so_far}"
        if doing.what == "saving":
            return f"saving the final model and record ({so_far})"
        if now - self.last_step_at >= max(STALLED_S, self.every_s):
            idle = duration(now - self.last_step_at)
            return f"{self._steps(self.num_timesteps)}: no env step for {idle} (updating the model or evaluating)"
        return f"{self._steps(self.num_timesteps)}, {self._pace()}"

    def _doing(self, what: str, step: int = 0, episodes: int = 0) -> None:
        self.doing = Doing(what, time.monotonic(), step, episodes)
        if self._bar is not None:
            self._bar.update(self._task, description=what)

    def evaluation_started(self, step: int, episodes: int) -> None:
        """A periodic evaluation of ``episodes`` episodes starts at ``step``."""
        self._doing("evaluating", step, episodes)

    def evaluation(self, step: int, result: EvalResult) -> None:
        """The line of an evaluation just done (:attr:`rlrun.run.evaluation.PeriodicEvaluation.on_result`)."""
        self._doing("training")
        say(f"{evaluation_line(step, result)}, {self._pace()}", self.console)

    def final_started(self, episodes: int, copies: int) -> None:
        """The line before the final evaluation, which can take longer than training."""
        self._doing("final evaluation", self.num_timesteps, episodes)
        on = f" on {copies} env copies" if copies > 1 else ""
        say(f"final evaluation: {episodes_word(episodes)}{on} ...", self.console)

    def final_done(self, result: EvalResult, seconds: float) -> None:
        """The final evaluation's result and how long it took."""
        self._doing("saving")
        say(f"final evaluation: {result_text(result)} ({duration(seconds)})", self.console)

    def _steps(self, step: int) -> str:
        """``step 2,048/3,072 (67%)``."""
        return f"step {step:,}/{self.total:,} ({100 * min(step, self.total) / self.total:.0f}%)"

    def _pace(self) -> str:
        """``640 steps/s, about 2 min 17 s left``, from this session's pace (evaluations included)."""
        seconds = time.monotonic() - self.started
        rate = (self.num_timesteps - self.first_step) / seconds if seconds > 0 else 0.0
        if rate <= 0:
            return "steps/s not known yet"
        left = max(self.total - self.num_timesteps, 0) / rate
        return f"{rate:,.0f} steps/s, about {duration(left)} left"

    def _start_bar(self) -> None:
        """rich's bar, which moves what is printed meanwhile above itself; the console handlers of the logging
        (which hold the streams rich redirects) write through rich's redirection while it is drawn."""
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(*bar_columns(), redirect_stdout=True, redirect_stderr=True)
        completed = min(self.num_timesteps, self.total)
        self._task = self._bar.add_task(self.doing.what, total=self.total, completed=completed)
        stdout, stderr = sys.stdout, sys.stderr
        self._bar.start()
        self._console.redirect(stdout, stderr)
