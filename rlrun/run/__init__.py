"""One training run, top to bottom: train, evaluation, snapshots, exact resume, interrupts, and loading a saved
run. :mod:`.library` is the one place that relies on private parts of SB3 and Gymnasium.

Imports :mod:`rlrun.checks`, :mod:`rlrun.build` and the layers below them.
"""
