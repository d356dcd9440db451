"""``rlrun-tune``'s work: search spaces, the Optuna study, trials of several seeds, the seed runs (each its own
``python -m rlrun`` process), and the report.

Imports :mod:`rlrun.table`, :mod:`rlrun.checks` and the layers below them.
"""
