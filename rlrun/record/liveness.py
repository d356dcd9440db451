"""Whether a run is still alive: its pid on this host, or how recently its ``run.json`` was rewritten."""

from __future__ import annotations

import datetime
import os
import platform
import select
import time
from pathlib import Path
from typing import Any


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_for_exit(pid: int, every_s: float = 1.0) -> None:
    """Return once the process ``pid`` has ended (a pidfd where Linux has one, else a look every ``every_s``)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        while pid_alive(pid):
            time.sleep(every_s)
        return
    try:
        select.select([fd], [], [])  # readable once the process has ended
    finally:
        os.close(fd)


def process_alive(record: dict[str, Any]) -> bool | None:
    """Whether the process a ``run.json`` names is alive; None for a run on another host (a cluster node),
    whose pids cannot be checked from here."""
    if record.get("host") != platform.node():
        return None
    pid = record.get("pid")  # a received or damaged record may hold anything there: only a pid is looked up
    return isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and pid_alive(pid)


def age_s(record: dict[str, Any], record_path: Path) -> float:
    """Seconds since the run last rewrote its record (``updated``, else the file's own time)."""
    try:
        updated = datetime.datetime.strptime(record["updated"], "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except (KeyError, TypeError, ValueError):
        updated = record_path.stat().st_mtime
    return datetime.datetime.now().timestamp() - updated


def still_running(record: dict[str, Any], record_path: Path, stale_after_s: float) -> bool:
    """Whether a ``running`` record belongs to a live process: its pid, on this host; on another host, a
    record rewritten less than ``stale_after_s`` ago."""
    alive = process_alive(record)
    return age_s(record, record_path) < stale_after_s if alive is None else alive
