"""joblib's workers forked from a process that has already imported what a job needs.

A job's first seconds in a fresh process go to imports: torch, SB3 and Hydra, about 2.5 CPU-seconds on
these machines, and ``torch._dynamo``, which torch's optimizers import on their first use, about 1 more.
The basic launcher pays them once, in the sweep's own process; joblib's default workers (loky's,
each a new interpreter) pay them once each, on the same cores the jobs need. So the joblib launcher's workers are
started by a fork server (Python's ``forkserver`` start method, which loky supports) that imports these
modules once, while the sweep's own process runs its checks, and then forks each worker with them
loaded. The fork server is a single-threaded process of its own: no thread of the sweep's process is
forked. It is a start-up measure: ``RLRUN_FAST_START=0`` turns it off (:mod:`rlrun.startup.bootstrap`), and
the workers are then loky's own. Either way the workers end with the sweep's process, even when it is killed
outright (:mod:`rlrun.sweep.orphans`; loky's own workers from their first job on).

Private API: ``multiprocessing.forkserver._forkserver._forkserver_pid``, the server's pid, to end it with the
sweep (:func:`rlrun.startup.bootstrap.stop_fork_server` says why).
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.forkserver
from typing import Any

from rlrun.startup import bootstrap

# What a job imports: the task function's module, training with SB3 and torch, Hydra's job wrapper.
# The fork server takes module names only (``set_forkserver_preload``), and imports them: its one module,
# rlrun.sweep.fork_server, calls fork_server.preload(), which imports these between the bootstrap's
# preload_begin() and preload_end().
JOB_MODULES = [
    "rlrun.cli.main",
    "rlrun.sweep.job",
    "rlrun.run.training",
    "hydra_plugins.hydra_joblib_launcher._core",
    "torch._dynamo",  # torch's optimizers import it on their first step: once here, not in every worker
]
PRELOAD = ["rlrun.sweep.fork_server"]


def start(launcher: Any) -> bool:
    """Under Hydra's joblib launcher: start the fork server its workers will come from. Called as the sweep
    starts, before its own process imports torch for the checks, so that both import side by side. Whether
    the launcher is joblib's (whose workers then watch this process: :mod:`rlrun.sweep.orphans`)."""
    try:
        from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher
        from joblib.externals.loky.backend.context import set_start_method
    except ImportError:
        return False
    if not isinstance(launcher, JoblibLauncher):
        return False
    if not bootstrap.enabled("preload"):
        return True
    multiprocessing.set_forkserver_preload(PRELOAD)
    set_start_method("forkserver", force=True)
    multiprocessing.forkserver.ensure_running()  # returns at once; the server imports in the background
    atexit.register(bootstrap.stop_fork_server)
    return True
