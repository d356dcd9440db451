"""What a sweep does with each of its jobs, decided in the parent process before any job is launched.

A job's folder is its identity. Running the same sweep command again:

- no run in the folder: ``train``;
- a ``completed`` run of the same config: ``skip`` (its files, ``.hydra/`` included, are never touched); but
  ``refuse`` when its ``run.json`` is not signed under this user's key (received, or edited since it ended): its
  results are never counted as the sweep's without a word;
- an ``interrupted`` run, or a ``running`` one whose process is gone, with a complete snapshot: ``resume``;
- a ``failed`` run, or a stopped one without a snapshot: ``rerun`` from the start, the attempt kept under
  ``<job>/attempts/<k>/``;
- a run of another config, or one still going: ``refuse`` (that job alone, never overwritten); so is a stopped
  run whose signatures do not verify under this user's trust key (:mod:`rlrun.record.signatures`).

A ``running`` run on this host is alive while a process holds its folder's lock (:mod:`rlrun.record.lock`, as
``resume=`` asks): never from its record's pid, which a received or stale record may name (``pid: 1``); on another
host (a cluster node, whose locks and pids cannot be asked from here) while its ``run.json`` was ``updated`` less
than ``stale_after_s`` ago.
"""

from __future__ import annotations

import platform
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record import lock, regular_files, signatures
from rlrun.record.formats import ATTEMPTS, read_json
from rlrun.record.leftovers import remove_leftovers
from rlrun.record.liveness import age_s

TRAIN, RESUME, RERUN, SKIP, REFUSE = "train", "resume", "rerun", "skip", "refuse"
LAUNCHED = (TRAIN, RESUME, RERUN)


@dataclass
class Job:
    """One job of a sweep: its overrides, its folder and what this invocation does with it."""

    overrides: list[str]  # the job's own overrides, as the sweeper generated them
    folder: str  # relative to the sweep folder: <env>-<algo>/<other overrides>/seed-<k>
    path: Path  # absolute
    config_hash: str
    action: str = TRAIN
    reason: str | None = None  # why a job is refused
    existed: bool = False  # whether the folder existed before this invocation
    attempt: Path | None = None  # where a failed attempt was moved to
    config: Any = None  # the job's composed config, as the job will see it


def refuse_collisions(jobs: list[Job]) -> None:
    """Two jobs that map to one folder: stop before any job starts."""
    seen: dict[str, Job] = {}
    for job in jobs:
        other = seen.setdefault(job.folder, job)
        if other is not job:
            raise UserError(
                f"two jobs of this sweep map to one folder, {job.folder}:\n"
                f"    {' '.join(other.overrides)}\n    {' '.join(job.overrides)}\n"
                "  folder names leave out the keys that do not change what is trained (progress_bar, eval.*, "
                "snapshot.*, check_nan, ...), so such jobs would train the same thing",
                "sweep only over keys that change training, or run the other values as a sweep of their own "
                "(sweep=NAME)",
            )


def refuse_common_mistake(jobs: list[Job]) -> None:
    """A mistake that every job of the sweep shares (a bad value, an env that cannot be made): stop before
    any job starts. Checks one config after the other and stops at the first that passes; the jobs whose
    config fails then record it as their own failure."""
    from rlrun.run.dry_run import preflight  # SB3 and torch

    if not jobs or any(job.action not in LAUNCHED for job in jobs):
        return
    problems: dict[str, str] = {}
    for job in jobs:
        if job.config_hash in problems:
            continue
        try:
            preflight(job.config)
        except UserError as error:
            problems[job.config_hash] = str(error)
        else:
            return
    raise UserError("every job of this sweep fails its checks:\n" + "\n".join(dict.fromkeys(problems.values())))


def _has_snapshot(path: Path) -> bool:
    from rlrun.run.snapshots import newest_complete  # SB3 and torch: only when there is something to resume

    return newest_complete(path / "snapshots") is not None


def _not_trusted(path: Path) -> str | None:
    """Why a stopped run may not be resumed here (its signatures do not verify under this user's key), or None."""
    try:
        signatures.check_folder(path, f"resuming {path}")  # a running record's deciding fields as signed too
    except signatures.NotTrusted as error:
        return str(error).replace("\n", " ")
    return None


def _links(path: Path) -> str | None:
    """Why a stopped run's folder is not read (links or special files in it, :mod:`rlrun.record.regular_files`),
    or None."""
    try:
        regular_files.check_folder(path, f"resuming {path}")
    except UserError as error:
        return str(error).replace("\n", " ")
    return None


def _unsigned_reason(path: Path, unsigned: str) -> str:
    return (
        f"{path} says completed, but its run.json is not signed with your trust key ({unsigned}): its results are "
        f"never taken as this sweep's unchecked; if you reviewed it, sign it with `{signatures.TRUST_COMMAND} "
        f"{path}`, else move the folder away to train the job again"
    )


def _still_running(path: Path, record: dict[str, Any], record_path: Path, stale_after_s: float) -> bool:
    """Whether a ``running`` record's run goes on: on this host, its folder's lock is held; elsewhere, its record
    was rewritten less than ``stale_after_s`` ago."""
    if record.get("host") == platform.node():
        return lock.in_use(path)
    return age_s(record, record_path) < stale_after_s


def _running_reason(path: Path, record: dict[str, Any], record_path: Path, stale_after_s: float) -> str:
    host = record.get("host")
    if host == platform.node():  # the holder as it wrote itself into the lock file, not the record's pid
        return f"{path} is still running ({lock.holder(path)}): stop it first or let it finish"
    return (
        f"{path} is still running on {host} (its run.json was updated {age_s(record, record_path):.0f} s ago); "
        f"it counts as stopped once that is older than hydra.sweeper.stale_after_s={stale_after_s:g}"
    )


def decide(job: Job, stale_after_s: float) -> None:
    """Set ``job.action`` (and ``job.reason`` for a refusal) from what its folder holds."""
    job.existed = job.path.exists()
    record_path = job.path / "run.json"
    if not record_path.is_file():
        job.action = TRAIN
        return
    record = read_json(record_path)
    if record is None:
        job.action, job.reason = REFUSE, f"{record_path} cannot be read; the folder is left as it is"
    elif record.get("config_hash") != job.config_hash:
        job.action = REFUSE
        job.reason = (
            f"{job.path} holds a run of another config (config_hash {str(record.get('config_hash'))[:12]}, "
            f"this job's {job.config_hash[:12]}); it is never overwritten: use another sweep= name"
        )
    elif record.get("status") == "completed":
        job.action = SKIP
        if (unsigned := signatures.unsigned_record(job.path)) is not None:  # its results are not this user's rlrun's
            job.action, job.reason = REFUSE, _unsigned_reason(job.path, unsigned)
    elif record.get("status") == "running" and _still_running(job.path, record, record_path, stale_after_s):
        job.action, job.reason = REFUSE, _running_reason(job.path, record, record_path, stale_after_s)
    elif record.get("status") in ("interrupted", "running") and (unreadable := _links(job.path)) is not None:
        job.action, job.reason = REFUSE, unreadable  # that job alone: never read through (a snapshot to /dev/zero)
    elif record.get("status") in ("interrupted", "running") and _has_snapshot(job.path):
        job.action = RESUME
        if (untrusted := _not_trusted(job.path)) is not None:  # never resumed: nothing of it runs here
            job.action, job.reason = REFUSE, untrusted
    else:
        job.action = RERUN


def keep_attempt(job: Job) -> Path:
    """Move everything of a failed attempt (run.json, log, .hydra, snapshots, ...) to ``attempts/<k>/``."""
    attempts = job.path / ATTEMPTS
    numbers = [int(p.name) for p in attempts.iterdir() if p.name.isdigit()] if attempts.is_dir() else []
    target = attempts / str(max(numbers, default=0) + 1)
    target.mkdir(parents=True)
    for entry in sorted(job.path.iterdir()):
        if entry.name != ATTEMPTS:
            shutil.move(str(entry), str(target / entry.name))
    job.attempt = target
    return target


def remove_unstarted(job: Job) -> None:
    """Remove the folder Hydra made for a job the stopped sweep never started (only when this
    invocation created it and it holds nothing but Hydra's record and log)."""
    if not job.existed:
        remove_leftovers(job.path)
