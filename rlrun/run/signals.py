"""The stop signals of an rlrun process (DESIGN.md, "Stopping a run: signals"): which they are, handling them
inside a block, and keeping those that arrive before a run handles them. Env worker processes ignore them
(:data:`rlrun.make.vec_envs.WORKER_IGNORES`): the main process decides.

A SIGHUP ignored when the block starts (``nohup``'s promise: the run outlives its terminal) stays ignored.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# SIGHUP: a closed terminal or SSH session, the commonest way a foreground run dies; a stop like SIGTERM.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2, signal.SIGHUP)
Handler = Callable[[int, FrameType | None], Any]

_kept: list[int] | None = None  # the stop signals kept by the outermost deferring() block, not yet handled


def _install(handler: Handler) -> dict[int, Any]:
    """Set ``handler`` for the stop signals, but not for a SIGHUP ignored now (``nohup``); the handlers before."""
    hangup_ignored = signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    return {
        signum: signal.signal(signum, handler) for signum in SIGNALS if not (hangup_ignored and signum == signal.SIGHUP)
    }


def _restore(previous: dict[int, Any]) -> None:
    for signum, old in previous.items():
        signal.signal(signum, old)


@contextmanager
def handling(handler: Handler) -> Iterator[None]:
    """Handle the stop signals with ``handler`` inside the block, then put back the handlers in force before it;
    the signals a :func:`deferring` block kept until now are handed to ``handler`` first. Only the main thread may
    set handlers (Python's rule): elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _install(handler)
    try:
        while _kept:
            handler(_kept.pop(0), None)
        yield
    finally:
        _restore(previous)


@contextmanager
def deferring() -> Iterator[None]:
    """Keep the stop signals that arrive inside the block until a :func:`handling` block inside it takes them (a
    run's training, which records the stop): a signal between a run's first record and its training then ends the
    run as a stop does, never by the signal's default action, which would leave a ``running`` record behind. A
    signal no handler took is raised again after the block, to the handlers before it. Blocks inside it add
    nothing: the outermost keeps the signals for the run (a single run's from Hydra's entry, before its folder is
    made; :func:`rlrun.run.training.train`'s too, where it is called alone)."""
    global _kept
    if threading.current_thread() is not threading.main_thread() or _kept is not None:
        yield
        return
    kept: list[int] = []
    previous = _install(lambda signum, _frame: kept.append(signum))
    _kept = kept
    try:
        yield
    finally:
        _kept = None
        _restore(previous)
        for signum in kept:  # not handled inside: the stop goes to whoever handled it before (a sweep, the default)
            signal.raise_signal(signum)
