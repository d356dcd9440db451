"""The fork server's first preload (``hydra_plugins/rlrun_sweeper/warm_up.JOB_MODULES``): no garbage
collections while it imports torch, SB3 and rlrun.

Every object those imports create lives as long as the server, and the collector would walk them again
and again (:mod:`rlrun.gc_pause` says why). :mod:`rlrun.preload_end`, the last preload, freezes them and
turns collections back on, so that the workers it forks collect as usual. Only the fork server imports
this module.
"""

import gc

gc.disable()
