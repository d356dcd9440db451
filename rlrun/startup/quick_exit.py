"""End a process without Python's module teardown, which costs about a second once torch is imported.

At exit, Python clears every module one by one; with torch, ``torch._dynamo`` (imported by the first
optimizer step) and SB3 loaded that takes 0.8-1.0 s on these machines, after all work is done. rlrun's
command-line entries end through :func:`run_and_exit` instead: the ``atexit`` handlers still run (logging's
flush, Ray's shutdown), the standard streams are flushed, and the process ends with the status it would
have had. Everything rlrun writes (run.json, model.zip, TensorBoard's files, tables) is closed before.
Worker processes still alive then (joblib's, kept idle for a next call that never comes) are ended
first: Python's own exit would tell them to stop and wait for their teardown, or for their idle timeout.
Used by :func:`rlrun.startup.bootstrap.entry`, which every console entry goes through.

Private API: ``atexit._run_exitfuncs``, Python's own call of the ``atexit`` handlers, which ``os._exit`` skips.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import NoReturn


def status_of(code: object) -> int:
    """The exit status Python gives ``SystemExit(code)`` (printing a message given instead of a number)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_and_exit(entry: Callable[[], object]) -> NoReturn:
    """Call ``entry``, then end the process at once with its status (an exception other than ``SystemExit``
    ends the usual way, with its traceback)."""
    try:
        entry()
        status = 0
    except SystemExit as exit_:
        status = status_of(exit_.code)
    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(timeout=5)
    atexit._run_exitfuncs()  # noqa: SLF001  (the handlers Python would run: logging's, Ray's)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nothing left to say
            stream.flush()
    os._exit(status)
