"""A joblib sweep's workers end with the sweep, even when its process is killed outright.

joblib's workers (forked by the sweep's fork server, :mod:`rlrun.sweep.warm_up`) do not notice on their own
that the sweep's process is gone: killed by SIGKILL, they and the fork server (which lives as long as any
of its workers) stayed idle for many minutes. So each worker watches the sweep's process (the fork server's
parent, and named to each job by :class:`rlrun.sweep.job.SweepTask`): once it is gone, an idle worker ends at
once, and a worker running a job has the job stopped at its next boundary with a snapshot
(:func:`rlrun.sweep.job.run_job` asks, as a stopping sweep does) and ends when the job has recorded its
outcome. The fork server then ends by itself.
"""

from __future__ import annotations

import logging
import os
import threading

from rlrun.record.liveness import wait_for_exit

_state = threading.Lock()
_running = False  # a job runs in this process now
_orphaned = False  # the sweep's process is gone
_watching = False


def orphaned() -> bool:
    """Whether the sweep's process is gone (then the job running here stops at its next boundary)."""
    return _orphaned


def watch(pid: int | None) -> None:
    """In one of the sweep's workers: watch the sweep's process ``pid`` from now on (once per process; nothing
    when ``pid`` is None or this process itself)."""
    global _watching
    if pid is None or pid == os.getpid() or _watching:
        return
    _watching = True
    threading.Thread(target=_watchdog, args=(pid,), name="rlrun-sweep-watchdog", daemon=True).start()


def watch_forked_workers() -> None:
    """In the sweep's fork server: every worker it forks watches the sweep's process from its first moment
    (an idle worker that never ran a job too). The server itself starts no thread: it ends once its last
    worker has (Python's fork server lives as long as any process it forked). The server is started by the
    sweep's process (:mod:`rlrun.sweep.warm_up`), its parent."""
    sweep, server = os.getppid(), os.getpid()

    def in_child() -> None:
        if os.getppid() == server:  # a worker; not a process a worker forks in turn
            watch(sweep)

    os.register_at_fork(after_in_child=in_child)


def _watchdog(pid: int) -> None:
    global _orphaned
    wait_for_exit(pid)
    with _state:
        _orphaned = True
        if not _running:
            os._exit(0)  # idle: nothing of the sweep's is left to do here


def job_starts() -> bool:
    """A job is about to run here; False when the sweep's process is gone (the job is then not started)."""
    global _running
    with _state:
        _running = not _orphaned
        return _running


def job_ends() -> None:
    """The job has recorded its outcome; in a worker whose sweep is gone, the process ends now."""
    global _running
    with _state:
        _running = False
        if _orphaned:
            logging.shutdown()  # the job's log, complete
            os._exit(0)
