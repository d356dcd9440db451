"""The fork server's first preload (:data:`rlrun.sweep.warm_up.JOB_MODULES`): no garbage collections while it
imports torch, SB3 and rlrun (:mod:`rlrun.startup.gc_pause` says why).

:mod:`rlrun.startup.preload_end`, the last preload, freezes what they created and turns collections back on, so
that the workers it forks collect as usual. Only the fork server imports this module; it acts through
:func:`rlrun.startup.bootstrap.preload_begin`, so ``RLRUN_FAST_START=0`` turns it off.

Private API: none.
"""

from rlrun.startup import bootstrap

bootstrap.preload_begin()
