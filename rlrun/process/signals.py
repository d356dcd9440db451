"""The stop signals of an rlrun process (DESIGN.md, "Stopping a run: signals"): which they are, handling them
inside a block, and env worker processes that ignore them (the main process decides)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2)


@contextmanager
def handling(handler: Callable[[int, FrameType | None], Any]) -> Iterator[None]:
    """Handle the stop signals with ``handler`` inside the block, then put back the handlers in force
    before it. Only the main thread may set handlers (Python's rule): elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def ignore_stop_signals(make_env: Callable[..., Any], **kwargs: Any) -> Any:
    """Env factory for subprocess workers: ignore the stop signals there, then make the env.

    SubprocVecEnv calls the factory first thing in each worker, so the worker never dies of a Ctrl-C
    sent to the whole process group; it ends when the main process closes the vec env.
    """
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    return make_env(**kwargs)
