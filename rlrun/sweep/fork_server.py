"""The one module the joblib fork server of a sweep preloads (:mod:`rlrun.sweep.warm_up`), and imported nowhere
else. Python's fork server takes module names only and imports them, so importing this module calls
:func:`preload`: the job modules imported once, with garbage collections paused and what they created frozen
(:mod:`rlrun.startup.bootstrap`), and each worker forked later watching the sweep's process
(:mod:`rlrun.sweep.orphans`)."""

from __future__ import annotations

from rlrun.startup import bootstrap
from rlrun.sweep import orphans, warm_up


def preload() -> None:
    """Import what a job needs (:data:`rlrun.sweep.warm_up.JOB_MODULES`) as start-up measures preload, then have
    every worker forked from here end with the sweep's process."""
    bootstrap.preload(warm_up.JOB_MODULES)
    orphans.watch_forked_workers()


preload()
