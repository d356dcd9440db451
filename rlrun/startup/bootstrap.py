"""The one place that installs rlrun's start-up measures and ends its processes, and the switch that turns
them off.

The measures, one module each, and where they apply:

- :mod:`~rlrun.startup.lazy_dynamo`: ``torch._dynamo`` kept out until something compiles; every console
  entry, and at import of :mod:`rlrun.cli.main` (what a sweep's workers import to run a job);
- :mod:`~rlrun.startup.gc_pause`: the garbage collector paused while ``rlrun`` starts, resumed when training
  or the sweep starts (:func:`pause_collector`);
- :mod:`~rlrun.startup.preload_begin` and :mod:`~rlrun.startup.preload_end`: the joblib fork server's first
  and last preloads (:mod:`rlrun.sweep.warm_up`), around the job modules it imports once for every worker;
- :mod:`~rlrun.startup.quick_exit`: the process ends without Python's module teardown (:func:`entry`).

``RLRUN_FAST_START=0`` in the environment turns every one of them off (:func:`enabled` is the only place it
is read): the process starts and ends as plain Python does, and a joblib sweep's workers are loky's own. It
is the way out for a user who suspects one of them; the tests run rlrun with it too. The private
``_RLRUN_FAST_START_SKIP=name,...`` (for benchmarks/startup_measures.py) turns off only the measures named
(:data:`MEASURES`).

Private API: none here (each measure's module names its own).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import ParamSpec

from rlrun.startup import gc_pause, lazy_dynamo, quick_exit

SWITCH = "RLRUN_FAST_START"
_SKIP = "_RLRUN_FAST_START_SKIP"
_OFF = frozenset({"0", "false", "no", "off"})
MEASURES = ("lazy_dynamo", "gc_pause", "preload", "quick_exit")

P = ParamSpec("P")

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


def install() -> None:
    """Install the measures that hold for the whole process (the lazy ``torch._dynamo``); idempotent. Every
    console entry calls it first (through :func:`entry`); :mod:`rlrun.cli.main` also calls it at import."""
    if "lazy_dynamo" not in _installed and enabled("lazy_dynamo") and lazy_dynamo.install():
        _installed.add("lazy_dynamo")


def pause_collector() -> None:
    """``rlrun``'s start: no garbage collections until training or the sweep starts; they resume it
    (:func:`rlrun.startup.gc_pause.resume`, a no-op when nothing paused it). Once per process."""
    if "gc_pause" not in _installed and enabled("gc_pause"):
        gc_pause.pause()
        _installed.add("gc_pause")


def preload_begin() -> None:
    """The fork server's first preload: no collections while it imports the job modules."""
    if enabled("preload"):
        gc_pause.pause()
        _installed.add("preload")


def preload_end() -> None:
    """The fork server's last preload: freeze what it imported, collections back on."""
    gc_pause.resume()


def entry(main: Callable[P, None]) -> Callable[P, None]:
    """A console entry: :func:`install` first, then ``main``; the process ends through
    :func:`rlrun.startup.quick_exit.run_and_exit` with ``main``'s status.

    Called with arguments (``main(["--json"])`` from a test or a script), it is a plain function: it returns
    or raises as ``main`` does. So are all calls with ``RLRUN_FAST_START=0``.
    """

    @functools.wraps(main)
    def console(*args: P.args, **kwargs: P.kwargs) -> None:
        install()
        if args or kwargs or not enabled("quick_exit"):
            return main(*args, **kwargs)
        _installed.add("quick_exit")
        quick_exit.run_and_exit(functools.partial(main, *args, **kwargs))

    return console
