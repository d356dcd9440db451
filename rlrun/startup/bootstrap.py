"""The one place that decides which of rlrun's start-up measures are on, and the switch that turns them off.

The measures, on public APIs only, and where they apply:

- ``gc_pause``: the garbage collector paused while ``rlrun`` starts, resumed when training or the sweep starts
  (:func:`pause_collector`; :mod:`rlrun.startup.gc_pause` says why);
- ``preload``: the fork servers' preloads, of a joblib sweep's workers (:mod:`rlrun.sweep.warm_up`) and of a
  study's seeds (:mod:`rlrun.tune.forked_seeds`): each imports what a job or a run needs once, with collections
  paused (:func:`preload_begin`), and freezes it (:func:`preload_end`) before forking.

Both pay on every torch version ``pyproject.toml`` admits (BENCHMARKS.md, "What each start-up measure buys").
``RLRUN_FAST_START=0`` in the environment turns every one of them off (:func:`enabled` is the only place it is
read): the process starts as plain Python does, a joblib sweep's workers are loky's own, and a study's seeds are
fresh processes. It is the way out for a user who suspects one of them; the tests run rlrun with it too.
``_RLRUN_FAST_START_SKIP=name,...`` (for benchmarks/speed/startup_measures.py) turns off only the measures named
(:data:`MEASURES`).

Private API: none.
"""

from __future__ import annotations

import importlib
import multiprocessing.forkserver
import os
import signal
from collections.abc import Sequence
from contextlib import suppress

from rlrun.startup import gc_pause

SWITCH = "RLRUN_FAST_START"
_SKIP = "_RLRUN_FAST_START_SKIP"
_OFF = frozenset({"0", "false", "no", "off"})
MEASURES = ("gc_pause", "preload")

_installed: set[str] = set()


def enabled(measure: str) -> bool:
    """Whether ``measure`` (one of :data:`MEASURES`) is on in this process."""
    if measure not in MEASURES:
        raise ValueError(f"no start-up measure {measure!r}; the measures are {', '.join(MEASURES)}")
    if os.environ.get(SWITCH, "1").strip().lower() in _OFF:
        return False
    return measure not in os.environ.get(_SKIP, "").split(",")


def installed() -> frozenset[str]:
    """The measures this process has installed so far (paused collector: until it was resumed or not)."""
    return frozenset(_installed)


def pause_collector() -> None:
    """``rlrun``'s start: no garbage collections until training or the sweep starts; they resume it
    (:func:`rlrun.startup.gc_pause.resume`, a no-op when nothing paused it). Once per process."""
    if "gc_pause" not in _installed and enabled("gc_pause"):
        gc_pause.pause()
        _installed.add("gc_pause")


def preload_begin() -> None:
    """The fork server's preload, first: no collections while it imports the job modules."""
    if enabled("preload"):
        gc_pause.pause()
        _installed.add("preload")


def preload_end() -> None:
    """The fork server's preload, last: freeze what it imported, collections back on."""
    gc_pause.resume()


def preload(modules: Sequence[str]) -> None:
    """Import ``modules`` between :func:`preload_begin` and :func:`preload_end`: what a fork server's one module
    does (a sweep's, :mod:`rlrun.sweep.fork_server`; a study's seeds', :mod:`rlrun.tune.seed_fork_server`)."""
    preload_begin()
    try:
        for module in modules:
            importlib.import_module(module)
    finally:
        preload_end()


def stop_fork_server() -> None:
    """End this process's fork server now and reap it: on its own it notices its parent is gone, then spends a
    second tearing torch down while holding the parent's output streams open (a pipe's reader waits for it); reaped,
    its CPU time and its workers' count in the parent's (``getrusage``'s children). It handles SIGINT only: SIGTERM
    ends it at once. Private API: Python keeps the server's pid in
    ``multiprocessing.forkserver._forkserver._forkserver_pid`` and has no public call that stops the server."""
    pid = getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)  # noqa: SLF001
    if pid:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        with suppress(ChildProcessError):
            os.waitpid(pid, 0)
