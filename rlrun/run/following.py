"""Following a run, a sweep or a study as it goes: in a log, a line every so often whatever is going on, with the
time before it; in a terminal, a few lines redrawn in place.

- :func:`clocked`: a line with the time before it where the output is not a terminal (a cluster job's log,
  ``nohup``, ``| tee``), so that one can tell when it was written and whether the job still lives; a terminal
  shows the time itself.
- :class:`Ticker`: a thread of its own that writes a line every ``every_s`` seconds, whatever the process is busy
  with (training, an evaluation, composing a sweep's configs, waiting for a trial's seeds): the line says what.
- :class:`LiveLines`: rich's :class:`rich.live.Live` (already drawing SB3's and rlrun's progress bars) redrawing a
  few lines in place below what is printed meanwhile (``print`` and the console's log lines go above it), and
  taking them down when it stops, so the screen is left with the printed lines only.

Imports nothing heavy: a sweep uses it before torch is imported.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from rlrun.record.fields import as_text
from rlrun.record.run_state import RunState

CLOCK = "%Y-%m-%d %H:%M:%S"  # the time before a line written into a log
REFRESH_PER_S = 2  # redraws of the live lines per second
LABEL_WIDTH = 60  # characters of a job's folder in a live line


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


def job_line(label: str, state: RunState) -> str:
    """``<label>  2,048/4,096 steps  last eval 0.600 at 2,048  about 12 s left``: a running job of a sweep, or
    seed of a study, in a live view (``label`` shown as text)."""
    budget = f"{state.budget:,}" if state.budget is not None else "?"
    last = state.last
    evaluated = "no evaluation yet" if last is None else f"last eval {last.mean_return:.3f} at {last.timesteps:,}"
    if state.status not in (None, "running"):
        left = state.status  # ended: completed, failed or interrupted
    elif state.budget is not None and state.timesteps >= state.budget:
        left = "final evaluation"
    else:
        seconds = state.seconds_left()
        left = "time left not known yet" if seconds is None else f"about {duration(seconds)} left"
    return f"{shortened(as_text(label))}  {state.timesteps:,}/{budget} steps  {evaluated}  {left}"


def shortened(label: str, width: int = LABEL_WIDTH) -> str:
    """``label`` cut in the middle to ``width`` characters (``gridworld-ppo/…net_arch+16/seed-1``): a job's folder
    begins with its env and algorithm and ends with what sets it apart, its seed last."""
    if len(label) <= width:
        return label
    head = label[: label.find("/") + 1] if 0 < label.find("/") < width // 2 else label[: width // 3]
    return f"{head}…{label[len(label) - (width - len(head) - 1) :]}"


def terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default: stdout) is a terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def clocked(line: str, stream: TextIO | None = None) -> str:
    """``line`` with the time before it (``2026-11-27 12:04:31 line``) where ``stream`` (default: stdout) is not a
    terminal; as it is in a terminal."""
    return line if terminal(stream) else f"{time.strftime(CLOCK)} {line}"


class Ticker:
    """Calls ``say(line())`` every ``every_s`` seconds (none for 0) in a daemon thread, from :meth:`start` until
    :meth:`stop`, or inside a ``with`` block; a ``line()`` of None says nothing that time."""

    def __init__(self, every_s: float, line: Callable[[], str | None], say: Callable[[str], None]) -> None:
        self.every_s, self.line, self.say = every_s, line, say
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Ticker:
        if self.every_s > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="rlrun-ticker", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None

    def __enter__(self) -> Ticker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            text = self.line()
            if text:
                self.say(text)


def print_clocked(line: str) -> None:
    """Print ``line`` to stdout (:func:`clocked`), flushed."""
    print(clocked(line), flush=True)


def console_handlers() -> Iterator[logging.StreamHandler[Any]]:
    """The handlers of the ``rlrun`` logger and the root that write to a stream, not a file."""
    for logger in (logging.getLogger("rlrun"), logging.getLogger()):
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                yield handler


class ConsoleRedirect:
    """While rich draws in place (a progress bar, live lines), the console handlers of the logging write through
    rich's redirection of stdout and stderr, so their lines go above what is drawn; :meth:`restore` gives them
    their streams back."""

    def __init__(self) -> None:
        self.streams: list[tuple[logging.StreamHandler[Any], Any]] = []

    def redirect(self, stdout: Any, stderr: Any) -> None:
        """Call with the streams as they were before rich replaced ``sys.stdout`` and ``sys.stderr``."""
        originals = {id(stdout): "stdout", id(stderr): "stderr"}
        for handler in console_handlers():
            name = originals.get(id(handler.stream))
            if name is not None:
                self.streams.append((handler, handler.setStream(getattr(sys, name))))

    def restore(self) -> None:
        for handler, stream in self.streams:
            handler.setStream(stream)
        self.streams.clear()


class LiveLines:
    """Lines redrawn in place in a terminal (``lines()`` asked :data:`REFRESH_PER_S` times a second), below
    what is printed meanwhile; taken down by :meth:`stop`."""

    def __init__(self, lines: Callable[[], list[str]]) -> None:
        from rich.live import Live  # rich draws SB3's progress bars: installed with it

        self.lines = lines
        self._live = Live(
            get_renderable=self._render,
            refresh_per_second=REFRESH_PER_S,
            transient=True,
            redirect_stdout=True,
            redirect_stderr=True,
        )
        self._console = ConsoleRedirect()

    def _render(self) -> Any:
        from rich.text import Text

        try:
            lines = self.lines()
        except Exception as error:  # a view that cannot be drawn now is no reason to stop what it shows
            lines = [f"(not drawn: {type(error).__name__}: {error})"]
        return Text("\n".join(lines), no_wrap=True, overflow="ellipsis")

    def start(self) -> LiveLines:
        stdout, stderr = sys.stdout, sys.stderr
        self._live.start()
        self._console.redirect(stdout, stderr)
        return self

    def stop(self) -> None:
        """Take the lines down (the screen keeps what was printed above them)."""
        self._console.restore()
        self._live.stop()
