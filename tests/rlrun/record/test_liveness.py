"""Whether a run is still alive: its pid on this host; on another host, how recently run.json was rewritten."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import pytest

from rlrun.record.formats import now
from rlrun.record.liveness import age_s, process_alive, still_running
from tests import forked_commands

HERE = platform.node()


@pytest.fixture(scope="module")
def dead_pid() -> int:
    """The pid of a process that has ended."""
    child = forked_commands.Popen(["-c", "pass"])
    child.wait()
    return child.pid


def test_on_this_host_the_pid_decides(tmp_path: Path, dead_pid: int) -> None:
    path = tmp_path / "run.json"
    path.write_text("{}")
    long_ago = "2000-01-01T00:00:00+0000"
    assert process_alive({"host": HERE, "pid": os.getpid()}) is True
    assert still_running({"host": HERE, "pid": os.getpid(), "updated": long_ago}, path, 60.0)
    assert process_alive({"host": HERE, "pid": dead_pid}) is False
    assert not still_running({"host": HERE, "pid": dead_pid, "updated": now()}, path, 60.0)
    assert not still_running({"host": HERE, "pid": None, "updated": now()}, path, 60.0)


def test_on_another_host_the_age_of_the_record_decides(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("{}")
    elsewhere = {"host": f"not-{HERE}", "pid": os.getpid()}
    assert process_alive(elsewhere) is None
    assert still_running({**elsewhere, "updated": now()}, path, 60.0)
    assert not still_running({**elsewhere, "updated": "2000-01-01T00:00:00+0000"}, path, 60.0)


def test_without_updated_the_file_time_counts(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("{}")
    old = time.time() - 600
    os.utime(path, (old, old))
    assert age_s({"updated": "not a time"}, path) == pytest.approx(600, abs=5)
    assert not still_running({"host": f"not-{HERE}"}, path, 300.0)
    assert still_running({"host": f"not-{HERE}"}, path, 900.0)
