"""The rules checked before heavy work, by training and ``rlrun-check`` alike: ranges, algorithm arguments,
env/algorithm fit, budgets, and the env checks of ``rlrun-check``.

Imports :mod:`rlrun.make` and the layers below it.
"""
