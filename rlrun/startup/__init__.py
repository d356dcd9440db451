"""How an rlrun process starts: the start-up measures (the paused garbage collector, the fork server's preloads),
decided by one bootstrap (:mod:`.bootstrap`), and rendering without a display (:mod:`.headless`). Stop signals
live with the run (:mod:`rlrun.run.signals`). ``RLRUN_FAST_START=0`` turns every start-up measure off.

Imports nothing of rlrun's.
"""
