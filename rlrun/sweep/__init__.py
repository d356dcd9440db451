"""``rlrun -m``: each job's decision (skip, resume, re-run, refuse) taken in the sweep's own process, the job
inside its worker, ``sweep.json``, and the Hydra sweeper (``hydra_plugins/rlrun_sweeper`` holds a thin
``Sweeper`` for Hydra's plugin scan that imports this package only when a sweep starts).

Imports :mod:`rlrun.run`, :mod:`rlrun.table`, :mod:`rlrun.checks` and the layers below them.
"""
