"""One training run, top to bottom: training, evaluation, snapshots, exact resume, stop signals and interrupts,
and loading a saved run (:mod:`.loading`; a folder that is not trusted through :mod:`.received`). :mod:`.seam` is
the one place that relies on private parts of SB3 and Gymnasium.

Imports :mod:`rlrun.checks`, :mod:`rlrun.make` and the layers below them.
"""
