"""The one module the fork server of rlrun-tune's seeds preloads (:mod:`rlrun.tune.forked_seeds`), and imported
nowhere else. Python's fork server takes module names only and imports them, so importing this module calls
:func:`preload`: what a run needs imported once, with garbage collections paused and what they created frozen
(:mod:`rlrun.startup.bootstrap`), before any seed is forked."""

from __future__ import annotations

from rlrun.startup import bootstrap
from rlrun.tune import forked_seeds


def preload() -> None:
    """Import what a seed needs (:data:`rlrun.tune.forked_seeds.RUN_MODULES`) as start-up measures preload."""
    bootstrap.preload(forked_seeds.RUN_MODULES)


preload()
