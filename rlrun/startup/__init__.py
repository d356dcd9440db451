"""How an rlrun process starts: the start-up measures (lazy ``torch._dynamo``, the paused garbage collector, the
fork server's preloads, the quick exit), installed by one bootstrap (:mod:`.bootstrap`), and rendering without a
display (:mod:`.headless`). Stop signals live with the run (:mod:`rlrun.run.signals`). ``RLRUN_FAST_START=0``
turns every start-up measure off.

Imports nothing of rlrun's.
"""
