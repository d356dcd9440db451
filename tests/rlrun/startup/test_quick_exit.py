"""A process that ends through ``rlrun.startup.quick_exit`` keeps its exit status, its output and its ``atexit``
handlers, and does not wait for worker processes left idle."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from rlrun.startup.quick_exit import status_of

SCRIPT = """\
import atexit, multiprocessing, sys, time
from rlrun.startup.quick_exit import run_and_exit


def idle():
    time.sleep(120)


def entry():
    multiprocessing.Process(target=idle).start()  # a worker kept for a next call that never comes
    atexit.register(lambda: print("atexit ran", flush=True))
    print("buffered output", end="")
    {end}


if __name__ == "__main__":
    run_and_exit(entry)
"""


@pytest.mark.parametrize(
    ("end", "status", "stderr"),
    [("return None", 0, ""), ("sys.exit(3)", 3, ""), ("sys.exit('no such env')", 1, "no such env")],
)
def test_status_output_and_atexit_are_kept_and_idle_workers_do_not_hold_the_exit(
    end: str, status: int, stderr: str
) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT.format(end=end))], capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - started < 60  # Python's own exit would wait 120 s for the idle worker
    assert done.returncode == status
    assert done.stdout == "buffered outputatexit ran\n"
    assert stderr in done.stderr


def test_status_of_follows_python() -> None:
    assert [status_of(None), status_of(0), status_of(2), status_of(256 + 7)] == [0, 0, 2, 7]
