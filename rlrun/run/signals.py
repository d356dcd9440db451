"""The stop signals of an rlrun process (DESIGN.md, "Stopping a run: signals"): which they are, handling them
inside a block. Env worker processes ignore them (:data:`rlrun.make.vec_envs.WORKER_IGNORES`): the main process
decides."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# SIGHUP: a closed terminal or SSH session, the commonest way a foreground run dies; a stop like SIGTERM.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2, signal.SIGHUP)


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
