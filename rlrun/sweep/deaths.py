"""A job whose process is killed outright (SIGKILL: the out-of-memory killer) costs only itself.

joblib's workers (loky's) share one pool: when one of them is killed, loky kills the others as well and raises
``TerminatedWorkerError`` for every job of the batch. So while the launcher runs, the sweep's process watches its
descendants (the pool's workers, from their start) and the processes its jobs' records name (a pidfd each, Linux's
handle that becomes readable the moment a process dies) and notes the order in which they die. When the launcher
then fails, the job whose process died first, the one killed from outside, is recorded ``failed`` with the cause;
the jobs the pool ended after it, and those it never started, go to a fresh pool (loky makes a new one once the old
is broken), each resumed from its newest snapshot or trained from the start as the sweep's rules say
(:func:`rlrun.sweep.plan.decide`).

Where pidfds do not exist (not Linux), every job whose process is gone is taken as killed.
"""

from __future__ import annotations

import os
import platform
import select
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from rlrun.record.formats import read_json
from rlrun.record.liveness import pid_alive
from rlrun.record.run_record import SETTLED_STATUSES, RunRecord
from rlrun.sweep import plan
from rlrun.sweep.plan import LAUNCHED, RERUN, Job

_SCAN_S = 0.5  # how often the watch looks for jobs that started (their run.json names their process)


def _running_pid(path: Path) -> int | None:
    """The pid of the process running the job on this host, from its ``run.json``; None if it is not running."""
    record = read_json(path / "run.json")
    if not record or record.get("status") != "running" or record.get("host") != platform.node():
        return None
    pid = record.get("pid")
    return int(pid) if isinstance(pid, int) else None


class DeathWatch:
    """Watches the processes that may run the jobs and notes the order in which they die: :meth:`first` tells
    which of some dead processes died first.

    A process is watched from the moment it is seen: a descendant of this process (a pool's worker, usually
    seconds before it takes a job) or the process a job's ``run.json`` names. Watching the workers from their start
    closes the window between a job writing its ``run.json`` and the next look at it, in which a process killed
    early would die unseen.
    """

    def __init__(self, jobs: list[Job]) -> None:
        self.jobs = jobs
        self.watching = hasattr(os, "pidfd_open")
        self.deaths: dict[int, int] = {}  # pid -> the round of polling in which it was seen dead
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rlrun-sweep-deaths", daemon=True)
        self._stamps: dict[Path, int] = {}

    def __enter__(self) -> DeathWatch:
        if self.watching:
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def first(self, dead: set[int]) -> set[int]:
        """Those of the ``dead`` pids seen dying in the earliest round (every one where pidfds do not exist)."""
        if not self.watching:
            return dead
        rounds = {pid: self.deaths[pid] for pid in dead if pid in self.deaths}
        return {pid for pid, round_ in rounds.items() if round_ == min(rounds.values(), default=None)}

    def _started_pids(self) -> set[int]:
        """This process's descendants, and the pids of the jobs whose ``run.json`` changed since the last look and
        says ``running``."""
        pids = _descendants()
        for job in self.jobs:
            try:
                stamp = (job.path / "run.json").stat().st_mtime_ns
            except OSError:
                continue
            if self._stamps.get(job.path) != stamp:
                self._stamps[job.path] = stamp
                if (pid := _running_pid(job.path)) is not None:
                    pids.add(pid)
        return pids

    def _loop(self) -> None:
        poller, fds, round_ = select.poll(), dict[int, int](), 0
        try:
            while not self._stop.is_set():
                for pid in self._started_pids() - set(fds.values()) - set(self.deaths):
                    with suppress(OSError):  # already gone: not seen dying
                        fd = os.pidfd_open(pid)
                        fds[fd] = pid
                        poller.register(fd, select.POLLIN)
                # the ready set is taken by the kernel as the process dies, before the pool (a thread of this
                # process, which needs the interpreter this thread holds on waking) can end the others
                round_ += 1
                for fd, _ in poller.poll(_SCAN_S * 1000):
                    pid = fds.pop(fd)
                    poller.unregister(fd)
                    if _is_pidfd_of(fd, pid):  # else another part of the process closed it (see _is_pidfd_of)
                        self.deaths[pid] = round_
                        os.close(fd)
        finally:
            for fd, pid in fds.items():
                if _is_pidfd_of(fd, pid):
                    os.close(fd)


def _is_pidfd_of(fd: int, pid: int) -> bool:
    """Whether ``fd`` is still this watch's pidfd of ``pid`` (Linux's fdinfo says ``Pid: -1`` once it is reaped).

    Code elsewhere in the process that closes a descriptor twice (a file object closing again what was closed
    by hand) can close one of the watch's, and the number can then be handed to a file of someone else's: such an
    fd tells nothing of the process (poll says it is invalid, or ready for another reason) and is not the watch's
    to close. The process is watched again through a new pidfd at the next look.
    """
    try:
        if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:[pidfd]":
            return False
        with open(f"/proc/self/fdinfo/{fd}") as info:
            fields = dict(line.split(":", 1) for line in info if ":" in line)
    except OSError:
        return False
    return fields.get("Pid", "").strip() in (str(pid), "-1")


def _descendants() -> set[int]:
    """The pids of this process's children, theirs and so on (a pool's workers are the children of its fork
    server); from Linux's /proc, none where it does not list them."""
    pids: set[int] = set()
    parents = [os.getpid()]
    while parents:
        for listing in Path(f"/proc/{parents.pop()}/task").glob("*/children"):
            with suppress(OSError):
                children = {int(pid) for pid in listing.read_text().split()} - pids
                pids |= children
                parents += children
    return pids


def _killed(watch: DeathWatch, jobs: list[Job]) -> list[tuple[Job, int]]:
    """The jobs whose process was killed from outside: running, gone, and (with pidfds) the first to die."""
    dead = {job.path: pid for job in jobs if (pid := _running_pid(job.path)) is not None and not pid_alive(pid)}
    first = watch.first(set(dead.values()))
    return [(job, dead[job.path]) for job in jobs if dead.get(job.path) in first]


def _record_killed(job: Job, pid: int, error: Exception) -> None:
    record = read_json(job.path / "run.json") or {}
    said = " ".join(str(error).split())
    cause = (
        f"the job's process (pid {pid}) was killed outright, e.g. by the out-of-memory killer; "
        f"the launcher said: {type(error).__name__}: {said}"
    )
    RunRecord(job.path, record).finish("failed", error=cause)
    print(f"rlrun: {job.folder}: failed: its process (pid {pid}) was killed outright", file=sys.stderr, flush=True)


def _to_launch_again(job: Job, stale_after_s: float) -> bool:
    """Whether the job, which the broken pool ended or never started, is launched again (and how: ``job.action``)."""
    record = read_json(job.path / "run.json")
    if record and record.get("status") in SETTLED_STATUSES:
        return False
    plan.decide(job, stale_after_s)
    if job.action == RERUN:
        plan.keep_attempt(job)
    return job.action in LAUNCHED


def launch_surviving(
    launch: Callable[[list[Job]], Any], jobs: list[Job], stopping: Callable[[], bool], stale_after_s: float = 600.0
) -> None:
    """Launch ``jobs``; when the launcher fails because a job's process was killed outright, record that job
    ``failed`` and launch the others it cost again. Any other failure of the launcher is raised."""
    while jobs:
        with DeathWatch(jobs) as watch:
            try:
                launch(jobs)
                return
            except Exception as error:
                watch.__exit__()  # every death seen: the pool has ended its workers by now
                killed = _killed(watch, jobs)
                if not killed or stopping():
                    raise
                for job, pid in killed:
                    _record_killed(job, pid, error)
                gone = {id(job) for job, _ in killed}
                jobs = [job for job in jobs if id(job) not in gone and _to_launch_again(job, stale_after_s)]
        if jobs:
            print(f"rlrun: launching the other {len(jobs)} job(s) again in a fresh pool", file=sys.stderr, flush=True)
