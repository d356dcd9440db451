"""``rlrun -m ...`` from the sweep's own process: plan every job, launch those to run, record the sweep.

The sweeper (``hydra_plugins/rlrun_sweeper``) composes the jobs and calls :func:`run`, which

1. decides for each job (:mod:`rlrun.sweep.plan`) and moves failed attempts to ``attempts/<k>/``;
2. hands only the jobs to run to Hydra's launcher (basic, joblib, submitit, Ray), each with its folder
   given explicitly, so every worker process agrees on it;
3. prints one line as each job ends (:class:`rlrun.sweep.summary.Watcher`, reading the job folders);
4. in a ``finally``, whatever the launcher did, writes ``sweep.json``, the summary and the sweep's
   tables, and returns DESIGN.md's exit status: 0 all completed or skipped; 1 any failed, interrupted
   or refused; 128 + N when the sweep itself was stopped by signal N.

The first SIGINT, SIGTERM or SIGUSR2 to this process stops the sweep gracefully: jobs running end at
their next boundary with a snapshot (their own processes get the terminal's Ctrl-C too; a signal sent to
this process alone reaches them through the stop marker, :data:`rlrun.sweep.job.STOP_FILE`), jobs not
started yet are left for the same command to run (a SLURM sweep's queued jobs are cancelled,
:mod:`rlrun.sweep.cancel`); a second one stops at once. The sweep holds its folder's
lock (:mod:`rlrun.record.lock`, taken by the sweeper before this runs), so no other sweep writes there.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, suppress
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rlrun.config.keys import override_value
from rlrun.record import logs
from rlrun.record.formats import now
from rlrun.run.signals import handling
from rlrun.startup import gc_pause
from rlrun.sweep import deaths, jobs_progress, plan
from rlrun.sweep.job import STOP_FILE, SweepStopped, mark_sweeper_process
from rlrun.sweep.plan import LAUNCHED, RERUN, RESUME, SKIP, TRAIN, Job
from rlrun.sweep.summary import (
    ENDED_BADLY,
    ENDED_WELL,
    LOG_NAME,
    Watcher,
    jobs_word,
    summary,
    sweep_json,
    write_sweep_json,
)
from rlrun.track.loggers import logs_to_service

if TYPE_CHECKING:
    from rlrun.track.group import Group

# launch(list of each job's overrides, index of the first job) -> Hydra's JobReturns (not used: the
# job folders are the record)
Launch = Callable[[list[list[str]], int], Sequence[Any]]


class StopRequest:
    """The first signal asks the sweep to stop (see the module's docstring); a second stops at once."""

    def __init__(self, sweep_dir: Path, on_stop: Callable[[], None] | None = None) -> None:
        self.marker = sweep_dir / STOP_FILE
        self.on_stop = on_stop  # e.g. cancel the launcher's jobs not started yet (rlrun.sweep.cancel)
        self.signum: int | None = None

    def installed(self) -> AbstractContextManager[None]:
        """Handle the signals inside the block (the main thread's handlers before it are put back)."""
        return handling(self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
        self.marker.write_text(f"{signal.Signals(signum).name}\n")
        print(
            f"rlrun: {signal.Signals(signum).name}: stopping the sweep; running jobs end at their next "
            "boundary with a snapshot, the same command continues. Again to stop at once.",
            file=sys.stderr,
            flush=True,
        )
        if self.on_stop is not None:
            self.on_stop()


def launch_overrides(job: Job, sweep_dir: Path) -> list[str]:
    """The job's overrides plus its folder, given explicitly so that every worker process agrees on it (the
    parent's decision for the job travels with the task function: :class:`rlrun.sweep.job.SweepTask`)."""
    folder = [f"hydra.sweep.dir={override_value(str(sweep_dir))}", f"hydra.sweep.subdir={override_value(job.folder)}"]
    return [*job.overrides, *folder]


def _launch_jobs(launch: Launch, sweep_dir: Path, first: int, jobs: list[Job]) -> Sequence[Any]:
    return launch([launch_overrides(job, sweep_dir) for job in jobs], first)


def _announce(sweep_dir: Path, jobs: list[Job]) -> None:
    counts = {action: sum(job.action == action for job in jobs) for action in LAUNCHED}
    words = [
        f"{counts[TRAIN]} to run",
        f"{counts[RESUME]} to resume",
        f"{counts[RERUN]} to run again (the failed attempt kept in attempts/)",
        f"{sum(job.action == SKIP for job in jobs)} completed before (skipped)",
        f"{sum(job.action == plan.REFUSE for job in jobs)} refused",
    ]
    kept = [w for w in words if not w.startswith("0 ")]
    print(f"sweep {sweep_dir}: {jobs_word(len(jobs))}: {', '.join(kept)}", flush=True)
    for job in jobs:
        if job.action == plan.REFUSE:
            print(f"  refused: {job.folder}\n    {job.reason}", flush=True)


def _write_tables(sweep_dir: Path) -> None:
    """The sweep's tables (:mod:`rlrun.table.write`)."""
    from rlrun.table.write import write_tables  # scipy and matplotlib: only when a sweep ends

    try:
        write_tables([sweep_dir], sweep_dir)
    except Exception as error:  # no table (e.g. no completed run) does not change what the sweep did
        print(f"rlrun: no table written: {error}", file=sys.stderr)
        return
    if (sweep_dir / "table.md").exists():
        print(f"table: {sweep_dir / 'table.md'}")


def _import_tables_meanwhile() -> None:
    """While other processes run the jobs, this one imports what the tables need (scipy, matplotlib: about
    a second), which would otherwise be paid after the last job."""
    loader = threading.Thread(
        target=importlib.import_module, args=("rlrun.table.write",), name="rlrun-tables", daemon=True
    )
    loader.start()


def run(
    jobs: list[Job],
    launch: Launch,
    sweep_dir: Path,
    info: dict[str, Any],
    batch_size: int | None,
    jobs_elsewhere: bool = False,
    on_stop: Callable[[], None] | None = None,
    group: Group | None = None,
) -> int:
    """Run the sweep's jobs (already decided); the sweep's exit status. ``jobs_elsewhere``: the launcher
    runs them in other processes (every launcher but Hydra's basic one); ``on_stop``: called once when the
    sweep is asked to stop, after the stop marker is written (cancels a scheduler's queued jobs); ``group``: the
    sweep's tracked run (:func:`tracking_group`), ended with the sweep's files once they are written."""
    started = now()
    gc_pause.resume()  # paused by the command line while the process started
    mark_sweeper_process()
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / STOP_FILE).unlink(missing_ok=True)  # left by an earlier sweep that was killed
    for job in jobs:
        if job.action == RERUN:
            plan.keep_attempt(job)
    _announce(sweep_dir, jobs)
    to_run = [job for job in jobs if job.action in LAUNCHED]
    watcher, stop = Watcher(jobs, progress_every=jobs_progress.every_s(jobs)), StopRequest(sweep_dir, on_stop)
    stopped: int | None = None
    launcher_failed = False
    watcher.start()
    if jobs_elsewhere and to_run:
        _import_tables_meanwhile()
    try:
        with stop.installed(), logs.to_log_files(logs.LAUNCHER_LOGGERS, sweep_dir / LOG_NAME):  # not the console
            step = batch_size or max(len(to_run), 1)
            for first in range(0, len(to_run), step):
                if stop.signum is not None:
                    break
                deaths.launch_surviving(  # a job killed outright costs only itself
                    partial(_launch_jobs, launch, sweep_dir, first),
                    to_run[first : first + step],
                    lambda: stop.signum is not None,
                )
    except SweepStopped as signalled:
        stopped = signalled.signum
    except KeyboardInterrupt:
        stopped = stop.signum or signal.SIGINT
    except Exception as error:  # e.g. joblib's pool broken by a worker killed outright
        launcher_failed = True
        print(f"rlrun: the launcher stopped: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
    finally:
        stopped = stopped or stop.signum
        watcher.stop()
        with suppress(OSError):
            (sweep_dir / STOP_FILE).unlink(missing_ok=True)
        outcomes = [watcher.outcome(job) for job in jobs]
        for job, outcome in zip(jobs, outcomes, strict=True):
            if outcome.status == "not_started":
                plan.remove_unstarted(job)
        data = sweep_json(sweep_dir, jobs, outcomes, info, started)
        path = write_sweep_json(sweep_dir, data)
        print(summary(sweep_dir, data, jobs), flush=True)
        print(f"sweep record: {path}", flush=True)
        _write_tables(sweep_dir)
        if group is not None:
            whole = not launcher_failed and all(outcome.status in ENDED_WELL for outcome in outcomes)
            group.close("interrupted" if stopped else "completed" if whole else "failed")
    if stopped is not None:
        return 128 + int(stopped)
    return 1 if launcher_failed or any(outcome.status in ENDED_BADLY for outcome in outcomes) else 0


def tracking_group(jobs: list[Job], sweep_dir: Path) -> Group | None:
    """The sweep's own tracked run, when its jobs log to a service (``logger=[..., mlflow]``): started now,
    before any job, so the jobs are its children (a bad logger setting: exit 2 here)."""
    logger = dict(jobs[0].config.get("logger") or {}) if jobs and jobs[0].config is not None else {}
    if not logs_to_service(logger):
        return None
    from rlrun.track.group import Group  # SB3 and torch: imported by now (the sweep's checks)

    return Group.open(logger, sweep_dir, sweep_dir.name, "sweep")
