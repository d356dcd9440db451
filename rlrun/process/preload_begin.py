"""The fork server's first preload (``hydra_plugins/rlrun_sweeper/warm_up.JOB_MODULES``): no garbage
collections while it imports torch, SB3 and rlrun (:mod:`rlrun.process.gc_pause` says why).

:mod:`rlrun.process.preload_end`, the last preload, freezes what they created and turns collections back on, so
that the workers it forks collect as usual. Only the fork server imports this module.
"""

from rlrun.process import gc_pause

gc_pause.pause()
