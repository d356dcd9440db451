"""What a run tells the user as it goes, in a terminal or in any log (a cluster job's, ``nohup``, ``| tee``, CI).

One line per periodic evaluation (step, mean return, success rate, steps/s, time left); without a progress bar,
a progress line every ``progress_every`` seconds; the final evaluation announced before it starts and its
result after. In a terminal the progress bar is drawn as before (capped at ``total_timesteps``) with the lines
above it. The lines go through the ``rlrun`` logger, so ``rlrun.log`` holds them too; a sweep's job writes them
to its own log only (the sweep's process prints the sweep's progress, :mod:`rlrun.sweep.jobs_progress`).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from rlrun.run.evaluation import EvalResult

log = logging.getLogger("rlrun")


def duration(seconds: float) -> str:
    """``0.4 s``, ``45 s``, ``3 min 05 s``, ``2 h 07 min``."""
    if seconds < 9.95:
        return f"{max(seconds, 0.0):.1f} s"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def episodes_word(count: int) -> str:
    """``1 episode``, ``50 episodes``."""
    return f"{count} episode" if count == 1 else f"{count} episodes"


def say(message: str, console: bool = True) -> None:
    """Log ``message`` at INFO through the ``rlrun`` logger; ``console=False``: to the log files only (a sweep's
    job, whose console is the sweep's terminal)."""
    if console:
        log.info(message)
        return
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, message, (), None)
    for handler in _file_handlers():
        if record.levelno >= handler.level:
            handler.handle(record)


def _file_handlers() -> Iterator[logging.FileHandler]:
    """The file handlers of the ``rlrun`` logger and the root, each once (a sweep's job gives the ``rlrun`` logger
    the root's own: :func:`rlrun.record.logs.to_log_files`)."""
    handlers = (h for logger in (log, logging.getLogger()) for h in logger.handlers)
    yield from dict.fromkeys(h for h in handlers if isinstance(h, logging.FileHandler))


def result_text(result: EvalResult) -> str:
    """``mean return 0.812 ± 0.100 over 10 episodes, success rate 0.90``."""
    success = "" if result.success_rate is None else f", success rate {result.success_rate:.2f}"
    spread = f"{result.mean_return:.3f} ± {result.std_return:.3f}"
    return f"mean return {spread} over {episodes_word(len(result.returns))}{success}"


def evaluation_line(step: int, result: EvalResult) -> str:
    """``evaluation at step 10,240: mean return ...`` (:func:`result_text`)."""
    return f"evaluation at step {step:,}: {result_text(result)}"


class Progress(BaseCallback):
    """Progress bar in a terminal, plain lines otherwise; and the line of each periodic evaluation.

    ``bar``: draw rich's progress bar (only on a terminal; a bar cannot be drawn in a file, so without one the
    plain lines are printed instead); ``every_s``: seconds between plain lines (0: none); ``console``: False in a
    sweep's job, whose lines go to its log only.
    """

    def __init__(self, total_timesteps: int, every_s: float, bar: bool, console: bool = True) -> None:
        super().__init__()
        self.total = total_timesteps
        self.every_s = every_s
        self.bar = bar and sys.stdout.isatty()
        self.console = console
        self.first_step = 0
        self.started = self.last_line = time.monotonic()
        self._bar: Any = None
        self._task: Any = None
        self._streams: list[tuple[logging.StreamHandler[Any], Any]] = []

    def _on_training_start(self) -> None:
        self.first_step = self.num_timesteps
        self.started = self.last_line = time.monotonic()
        if self.bar:
            self._start_bar()

    def _on_step(self) -> bool:
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.num_timesteps, self.total))
        elif self.every_s > 0 and time.monotonic() - self.last_line >= self.every_s:
            self.last_line = time.monotonic()
            say(f"step {self.num_timesteps:,}/{self.total:,} ({self._percent()}), {self._pace()}", self.console)
        return True

    def _on_training_end(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.num_timesteps, self.total))
        self.close()

    def close(self) -> None:
        """Take the progress bar down, if it is drawn, and give the console handlers their streams back."""
        if self._bar is not None:
            self._bar.stop()
            for handler, stream in self._streams:
                handler.setStream(stream)
            self._streams.clear()
            self._bar = None

    def evaluation(self, step: int, result: EvalResult) -> None:
        """The line of an evaluation just done (:attr:`rlrun.run.evaluation.PeriodicEvaluation.on_result`)."""
        say(f"{evaluation_line(step, result)}, {self._pace()}", self.console)

    def final_started(self, episodes: int, copies: int) -> None:
        """The line before the final evaluation, which can take longer than training."""
        on = f" on {copies} env copies" if copies > 1 else ""
        say(f"final evaluation: {episodes_word(episodes)}{on} ...", self.console)

    def final_done(self, result: EvalResult, seconds: float) -> None:
        """The final evaluation's result and how long it took."""
        say(f"final evaluation: {result_text(result)} ({duration(seconds)})", self.console)

    def _percent(self) -> str:
        return f"{100 * min(self.num_timesteps, self.total) / self.total:.0f}%"

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
        from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
        self._bar = RichProgress(*columns, redirect_stdout=True, redirect_stderr=True)
        self._task = self._bar.add_task("training", total=self.total, completed=min(self.num_timesteps, self.total))
        originals = {id(sys.stdout): "stdout", id(sys.stderr): "stderr"}
        self._bar.start()
        for handler in _console_handlers():
            name = originals.get(id(handler.stream))
            if name is not None:
                self._streams.append((handler, handler.setStream(getattr(sys, name))))


def _console_handlers() -> Iterator[logging.StreamHandler[Any]]:
    for logger in (log, logging.getLogger()):
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                yield handler
