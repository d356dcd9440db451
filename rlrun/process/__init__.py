"""How an rlrun process starts and ends: the start-up measures (lazy ``torch._dynamo``, the paused garbage
collector, the fork server's preloads, the quick exit) and stopping on signals, installed by one bootstrap
(:mod:`.bootstrap`). ``RLRUN_FAST_START=0`` turns every start-up measure off.

Imports nothing of rlrun's.
"""
