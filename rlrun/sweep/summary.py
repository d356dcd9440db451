"""What a sweep tells the user: one line per job as it ends, ``sweep.json`` and the summary.

Everything is read from the job folders (each job's ``run.json``), never from what the launcher
returns, so it is right whatever the launcher did: a worker killed outright, a broken pool, a signal.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlrun.record import signatures
from rlrun.record.formats import now, read_json, write_json
from rlrun.record.run_record import END_STATUSES
from rlrun.run import following
from rlrun.sweep.jobs_progress import SweepProgress
from rlrun.sweep.plan import LAUNCHED, REFUSE, SKIP, Job

# A job's status in sweep.json: how its run ended (run.json's status) or what this invocation did instead
ENDED_WELL = ("completed", "skipped")
ENDED_BADLY = ("failed", "interrupted", "refused", "not_started")  # any of them: the sweep exits with 1
JOB_STATUSES = ENDED_WELL + ENDED_BADLY
LOG_NAME = "rlrun.log"  # hydra.job.name in conf/config.yaml


@dataclass
class JobOutcome:
    """How one job of this invocation ended."""

    status: str
    error: str | None
    wall_s: float | None
    record: dict[str, Any] | None


def _stamp(job: Job) -> int | None:
    try:
        return (job.path / "run.json").stat().st_mtime_ns
    except OSError:
        return None


def _last_line(text: str | None) -> str | None:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


class Watcher:
    """Reads the launched jobs' folders and prints one line as each one ends, whatever the launcher, and the
    sweep's progress (:mod:`rlrun.sweep.jobs_progress`): in a terminal a live view below those lines, else a line
    every ``progress_every`` seconds."""

    def __init__(self, jobs: list[Job], poll_s: float = 1.0, progress_every: float = 0.0) -> None:
        self.jobs = [job for job in jobs if job.action in LAUNCHED]
        self.before = {job.folder: _stamp(job) for job in self.jobs}
        self.progress = SweepProgress(self.jobs, progress_every, lambda job: _stamp(job) != self.before[job.folder])
        # folder -> the job's number in the lines, and what its last line said (status, step) from which run.json
        self.reported: dict[str, tuple[int, tuple[Any, Any], int | None]] = {}
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rlrun-sweep-watcher", daemon=True)
        self.live: following.LiveLines | None = None  # the live view, in a terminal

    def outcome(self, job: Job) -> JobOutcome:
        """The job's status in this invocation, from its ``run.json``."""
        if job.action == SKIP:
            record = read_json(job.path / "run.json")
            return JobOutcome("skipped", None, record.get("wall_s") if record else None, record)
        if job.action == REFUSE:
            return JobOutcome("refused", job.reason, None, None)
        record = read_json(job.path / "run.json")
        if record is None or _stamp(job) == self.before[job.folder]:
            return JobOutcome("not_started", None, None, record)
        status = record.get("status")
        if status == "running":  # its process ended without a word: killed
            error = "the job's process ended without recording an outcome; the same command continues it"
            return JobOutcome("interrupted", error, record.get("wall_s"), record)
        return JobOutcome(str(status), _last_line(record.get("error")), record.get("wall_s"), record)

    def start(self) -> None:
        if self.jobs and following.terminal():
            self.live = following.LiveLines(self.progress.view).start()
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; report the jobs that ended since the last look."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.live is not None:
            self.live.stop()  # taken down: the screen keeps the jobs' lines
        self.poll(final=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.poll()
            if self.live is None:
                self.progress.tick()

    def poll(self, final: bool = False) -> None:
        """Print a line for each job that has ended since the last look (``final``: all launched jobs
        that ran, including those whose process was killed)."""
        for job in self.jobs:
            if job.folder in self.reported:
                self._told_again(job, final)
                continue
            outcome = self.outcome(job)
            ended = (outcome.record or {}).get("status") in END_STATUSES
            if outcome.status != "not_started" and (ended or final):
                self.reported[job.folder] = (len(self.reported) + 1, _said(outcome), _stamp(job))
                print(f"[{len(self.reported)}/{len(self.jobs)}] {job_line(job, outcome)}", flush=True)

    def _told_again(self, job: Job, final: bool) -> None:
        """A job reported as ended whose ``run.json`` has changed since: its scheduler started it again (SLURM
        requeues a job stopped by its time limit), so its line is told again as it resumes and as it ends, and the
        last line about it is true."""
        number, said, stamp = self.reported[job.folder]
        if _stamp(job) == stamp:
            return
        outcome = self.outcome(job)
        now = _said(outcome)
        if now[0] == said[0] == "running" or now == said:  # still running (its record is rewritten as it trains)
            return
        if now[0] == "running" and not final:
            resumes = (outcome.record or {}).get("resumes") or [{}]
            line = f"{job.folder}: started again by its scheduler, resuming from step {resumes[-1].get('from_step')}"
        else:
            line = job_line(job, outcome)
        self.reported[job.folder] = (number, now, _stamp(job))
        print(f"[{number}/{len(self.jobs)}] {line}", flush=True)


def _said(outcome: JobOutcome) -> tuple[Any, Any]:
    """What a job's line tells of its record: its status there and its step."""
    record = outcome.record or {}
    return record.get("status"), record.get("timesteps")


def job_line(job: Job, outcome: JobOutcome) -> str:
    """``<folder>: <status>, <final score>, <wall time>`` (the error and the log for a failed job)."""
    parts = [f"{job.folder}: {outcome.status}"]
    record = outcome.record or {}
    final = record.get("final") if outcome.status in ENDED_WELL else None
    if final:
        success = "" if final.get("success_rate") is None else f", success {final['success_rate']:.2f}"
        parts.append(f"mean return {final['mean_return']:.3f}{success}")
    if outcome.status == "interrupted" and record.get("timesteps"):
        parts.append(f"at step {record['timesteps']}")
    if outcome.wall_s is not None:
        parts.append(f"{outcome.wall_s:.1f} s")
    line = ", ".join(parts)
    if outcome.status in ("failed", "interrupted") and outcome.error:
        line += f"\n    {outcome.error}\n    log: {job.path / LOG_NAME}"
    return line


def sweep_json(
    sweep_dir: Path, jobs: list[Job], outcomes: list[JobOutcome], info: dict[str, Any], started: str
) -> dict[str, Any]:
    """The content of ``sweep.json`` (format in DESIGN.md, "Sweeps")."""
    counts = {"planned": len(jobs), **{status: 0 for status in JOB_STATUSES}}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    return {
        "sweep": sweep_dir.name,
        "command": info["command"],
        "launcher": info["launcher"],
        "started": started,
        "ended": now(),
        "counts": counts,
        "jobs": [
            {
                "folder": job.folder,
                "overrides": job.overrides,
                "status": outcome.status,
                "error": outcome.error,
                "log": f"{job.folder}/{LOG_NAME}",
                "wall_s": outcome.wall_s,
            }
            for job, outcome in zip(jobs, outcomes, strict=True)
        ],
    }


def write_sweep_json(sweep_dir: Path, data: dict[str, Any]) -> Path:
    """Write ``<sweep>/sweep.json`` atomically, signed (tables count the jobs it plans: they say when it is not)."""
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_json(sweep_dir / "sweep.json", signatures.signed(data))
    return sweep_dir / "sweep.json"


def jobs_word(count: int) -> str:
    """``1 job``, ``4 jobs``."""
    return f"{count} job" if count == 1 else f"{count} jobs"


def summary(sweep_dir: Path, data: dict[str, Any], jobs: list[Job]) -> str:
    """Counts by status, then each job that did not end well, with the last line of its error and its log."""
    counts = data["counts"]
    ended = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in JOB_STATUSES if counts[s])
    lines = [f"sweep {sweep_dir} ({data['launcher']} launcher): {jobs_word(counts['planned'])}: {ended or 'none run'}"]
    for job, entry in zip(jobs, data["jobs"], strict=True):
        if entry["status"] in ("failed", "interrupted", "refused"):
            lines.append(f"  {entry['status']}: {job.folder}")
            if entry["error"]:
                lines.append(f"    {entry['error']}")
            if entry["status"] != "refused":
                lines.append(f"    log: {job.path / LOG_NAME}")
    return "\n".join(lines)
