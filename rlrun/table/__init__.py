"""``rlrun-table``'s work: run folders read as data, grouped by config, their statistics, the table files and
the learning-curve plots.

Imports :mod:`rlrun.record` and :mod:`rlrun.config` only: reading runs needs no torch.
"""
