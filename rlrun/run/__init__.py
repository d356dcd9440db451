"""One training run, top to bottom: training, evaluation, snapshots, exact resume, stop signals and interrupts.
:mod:`.seam` is the one place that relies on private parts of SB3 and Gymnasium. Loading a saved run is
:mod:`rlrun.playback`'s.

Imports :mod:`rlrun.checks`, :mod:`rlrun.make` and the layers below them.
"""
