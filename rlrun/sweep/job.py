"""One job of a sweep, inside whichever process the launcher runs it in: it never raises.

Hydra's basic sweeper, the Ray launcher's ``ray.get`` and submitit's ``results()`` all stop at the first
job that raises, and ``SystemExit`` escapes Hydra's job wrapper; so a job records whatever happens
(a user mistake, an exception, NaN, a signal) in its folder's ``run.json`` and log, and returns.

A job in a process of the launcher's stops with the sweep too, though only the sweep's own process got the
signal: it watches the sweep's stop marker (:data:`STOP_FILE`) and, in joblib's workers, the sweep's process
itself (:mod:`rlrun.sweep.orphans`), and stops at its next boundary with a snapshot.

The one exception: a job running in the sweep's own process (the basic launcher) that is stopped by a
signal stops the sweep too (:class:`SweepStopped`), since the signal was the user's Ctrl-C or the
scheduler's, meant for the whole sweep.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig

from rlrun.config.errors import UserError
from rlrun.record import logs
from rlrun.record.formats import WriteFailed
from rlrun.record.lock import FolderInUse
from rlrun.record.provenance import requeued_command
from rlrun.sweep import orphans
from rlrun.sweep.plan import RERUN, RESUME, TRAIN

log = logging.getLogger("rlrun")

# Written into the sweep folder by the sweep's process when it is asked to stop: jobs not started yet
# return at once (whatever process they run in), and the same command runs them later.
STOP_FILE = ".stopping"
_sweeper_pid: int | None = None
_POLL_S = 0.2  # how often a running job looks for the sweep's stop marker


class SweepStopped(BaseException):
    """The sweep's own process was signalled: end the sweep (a BaseException, so no job wrapper catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def mark_sweeper_process() -> None:
    """Called by the sweeper: jobs run in this process (basic launcher) stop the sweep on a signal."""
    global _sweeper_pid
    _sweeper_pid = os.getpid()


def _stop_sweep_if_here(signum: int) -> None:
    if _sweeper_pid == os.getpid():
        raise SweepStopped(signum)


def stop_requested(sweep_dir: Path) -> bool:
    """Whether the sweep was asked to stop (see :data:`STOP_FILE`)."""
    return (sweep_dir / STOP_FILE).exists()


def _stop_when_asked(sweep_dir: Path, done: threading.Event) -> None:
    """Until ``done``: once the sweep asks to stop (its marker, or its process gone), stop the run at its next
    boundary with a snapshot, as a first SIGTERM would. The run's own interrupt handler is given the stop;
    before training has installed it, this waits; a run that already received a signal is left to it."""
    from rlrun.run.interrupts import InterruptCallback

    while not done.wait(_POLL_S):
        if not (stop_requested(sweep_dir) or orphans.orphaned()):
            continue
        handler = signal.getsignal(signal.SIGTERM)
        interrupts = getattr(handler, "__self__", None)
        if isinstance(interrupts, InterruptCallback) and callable(handler):
            if interrupts.received is None:
                handler(_sweep_signal(sweep_dir), None)  # the sweep's own: a Ctrl-C reads as SIGINT
            return


def _sweep_signal(sweep_dir: Path) -> int:
    """The signal that stopped the sweep, as its stop marker names it; SIGTERM when there is none (the sweep's
    process is gone)."""
    try:
        return int(signal.Signals[(sweep_dir / STOP_FILE).read_text().strip()])
    except (OSError, KeyError):
        return int(signal.SIGTERM)


@contextmanager
def _stopped_with_the_sweep(sweep_dir: Path) -> Iterator[None]:
    """While the job trains in a process of the launcher's (not the sweep's own): a signal to the sweep's
    process alone, or its death, reaches the job through :func:`_stop_when_asked`."""
    if _sweeper_pid == os.getpid():  # the basic launcher: the sweep's signal is this process's own
        yield
        return
    done = threading.Event()
    watcher = threading.Thread(target=_stop_when_asked, args=(sweep_dir, done), name="rlrun-job-stop", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


def _hand_over_to_submitit(signum: int) -> None:
    """Under submitit, SIGUSR2 is also its own pre-emption/time-limit warning. rlrun's handler took it during
    training; now that the snapshot is written, pass it to submitit's handler (back in place after training),
    which requeues the job (the requeued job resumes this folder) and exits, or raises when it would not
    requeue: then the job just ends interrupted and the same sweep command continues it."""
    handler = signal.getsignal(signal.SIGUSR2)
    if signum != signal.SIGUSR2 or not callable(handler):
        return
    if not getattr(handler, "__module__", "").startswith("submitit."):
        return
    try:
        handler(signum, None)
    except Exception as error:  # submitit's UncompletedJobError: not requeued (SystemExit, a requeue, goes on)
        log.warning("submitit does not requeue it (%s)", error)


def _one_line(error: BaseException) -> str:
    if isinstance(error, UserError):
        fix = f" (fix: {error.fix})" if error.fix else ""
        return f"UserError: {error.problem}{fix}".replace("\n", " ")
    return f"{type(error).__name__}: {error}".replace("\n", " ")


def _record_failure(cfg: DictConfig, run_dir: Path, meta: dict[str, Any], error: BaseException) -> None:
    """Make sure ``run.json`` says ``failed`` (a run that failed before it started has none yet)."""
    import json

    from rlrun.record.run_record import RunRecord

    try:
        record_path = run_dir / "run.json"
        if record_path.is_file():
            data = json.loads(record_path.read_text())
            if data.get("status") != "failed":
                RunRecord(run_dir, data).finish("failed", error=_one_line(error))
        else:
            RunRecord.start(run_dir, cfg, meta, policy=None).finish("failed", error=_one_line(error))
    except OSError as unwritten:  # a full disk: the log still says what happened
        log.error("could not record the failure in %s/run.json: %s", run_dir, unwritten)
    except Exception:  # the record itself cannot be written: the log still says what happened
        log.exception("could not record the failure in %s/run.json", run_dir)


class MetaTask(Protocol):
    """The command's own task function, as rlrun's sweeper receives it: it describes a job for its run.json."""

    def __call__(self, cfg: DictConfig) -> Any: ...

    def meta(self, cfg: DictConfig) -> dict[str, Any]: ...


@dataclass
class SweepTask:
    """Hydra's task function for a sweep's jobs, wrapped by rlrun's sweeper around the command's own ``task``
    (:class:`rlrun.cli.main.Task`, which names each job's env, algo and preset): it runs the job as the sweep
    decided (``actions``: job folder -> train, resume or rerun, filled in before any job is launched) under the
    sweep's tracked run (``tracking_group``) and never raises. Module-level and plain, since joblib, submitit and
    Ray pickle it into their workers."""

    task: MetaTask
    actions: dict[str, str] = field(default_factory=dict)
    sweep_pid: int | None = None  # the sweep's process, which joblib's workers watch (rlrun.sweep.orphans)
    # the sweep's tracked run (its tracking.json record, rlrun.track.group), the parent of each job's; {}: none
    tracking_group: dict[str, Any] = field(default_factory=dict)
    # the sweep's command line, as typed: each job's run.json names it (a job's own process may be a launcher's,
    # e.g. submitit's _submit.py); None: the job's own
    command: str | None = None

    def __call__(self, cfg: DictConfig) -> float | None:
        """One job, in whichever process the launcher runs it."""
        from hydra.core.hydra_config import HydraConfig

        hydra_cfg = HydraConfig.get()
        action = self.actions.get(str(hydra_cfg.sweep.subdir))
        run_dir, sweep_dir = Path(hydra_cfg.runtime.output_dir), Path(hydra_cfg.sweep.dir)
        meta = {**self.task.meta(cfg), "tracking_group": self.tracking_group}
        if self.command is not None:
            meta["command"] = self.command
        return run_job(cfg, run_dir, sweep_dir, meta, action, self.sweep_pid)


def run_job(
    cfg: DictConfig,
    run_dir: Path,
    sweep_dir: Path,
    meta: dict[str, Any],
    decision: str | None = None,
    sweep_pid: int | None = None,
) -> float | None:
    """Train the job (or resume it, when the sweep decided so or its folder holds this launch's own earlier
    attempt); its final mean return, or None. ``sweep_pid``: the sweep's process, watched from a worker."""
    from rlrun.run import training
    from rlrun.run.interrupts import RunInterrupted

    orphans.watch(sweep_pid)  # in a worker of the sweep (joblib's): stop, and end, with the sweep's process
    try:
        if stop_requested(sweep_dir) or not orphans.job_starts():
            log.warning("not started: the sweep is stopping; the same command runs it")
            _stop_sweep_if_here(signal.SIGINT)
            return None
        # the sweep's decision, taken in its own process; a job told to train whose folder already holds a
        # run is this launch's own earlier attempt, requeued by its scheduler (submitit), and continues it
        requeued = decision in (TRAIN, RERUN) and (run_dir / "run.json").is_file()
        meta = {**meta, "multirun": True}
        if requeued:  # its resumes[] entry says so (the job's own process is the scheduler's)
            meta["command"] = requeued_command(meta.get("command"))
        # the job's lines go to its own rlrun.log; the sweep's console gets its warnings and the sweep's own lines
        with _stopped_with_the_sweep(sweep_dir), logs.to_log_files(("rlrun",)):
            if decision == RESUME or requeued:
                final = training.resume(run_dir, cfg.progress_bar, meta)
            else:
                final = training.train(cfg, run_dir, meta)
    except SweepStopped:
        raise
    except FolderInUse as error:  # another process writes there: its run.json is left as it is
        log.error("rlrun: error: %s", error)
        return None
    except UserError as error:
        log.error("rlrun: error: %s", error)
        _record_failure(cfg, run_dir, meta, error)
        return None
    except RunInterrupted as stop:
        log.warning("%s; snapshot written, the same sweep command continues it", stop)
        _hand_over_to_submitit(stop.signum)
        _stop_sweep_if_here(stop.signum)
        return None
    except KeyboardInterrupt:
        log.warning("interrupted; the same sweep command continues it")
        _stop_sweep_if_here(signal.SIGINT)
        return None
    except BaseException as error:  # an exception, NaN with check_nan, SystemExit: recorded, never raised
        log.error("run failed: %s", _one_line(error), exc_info=not isinstance(error, (SystemExit, WriteFailed)))
        _record_failure(cfg, run_dir, meta, error)
        return None
    finally:
        orphans.job_ends()
    return float(final["mean_return"])
