"""The fork server's last preload (:data:`rlrun.sweep.warm_up.JOB_MODULES`): freeze what it has imported, and
collect garbage again (:mod:`rlrun.startup.preload_begin` paused it).

Those objects live as long as the server and every worker forked from it. Frozen, a worker's garbage
collections neither walk them nor write to the pages that hold them, which fork would otherwise copy
into each worker: the ``gc.freeze()`` recipe of Python's documentation for fork without exec. Only the
fork server imports this module; it acts through :func:`rlrun.startup.bootstrap.preload_end`.

Private API: none.
"""

from rlrun.startup import bootstrap

bootstrap.preload_end()
