"""One bootstrap installs the start-up measures and ends the process; ``RLRUN_FAST_START=0`` turns them all off.

The runs are processes of their own: whether a measure is installed is a property of the whole process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.startup import bootstrap
from tests.rlrun.helpers import TINY_RUN

# ``python -m rlrun`` (runpy, as ``-m`` does) with probes: at exit, what the process installed and what it saw.
# An object of __main__ says goodbye when Python's module teardown reaches it, which a quick exit skips.
RUN = """\
import atexit, gc, json, os, runpy, sys
from rlrun.startup import bootstrap, lazy_dynamo


class Teardown:
    def __del__(self, write=os.write):
        write(1, b"module teardown\\n")


teardown = Teardown()


def report():
    dynamo = sys.modules.get("torch._dynamo")
    print(json.dumps({
        "installed": sorted(bootstrap.installed()),
        "stand_in": dynamo is not None and not lazy_dynamo.loaded(),
        "real_dynamo": lazy_dynamo.loaded(),
        "frozen": gc.get_freeze_count(),
        "collecting": gc.isenabled(),
    }), flush=True)


atexit.register(report)
sys.argv = ["rlrun", *sys.argv[1:]]
runpy.run_module("rlrun", run_name="__main__", alter_sys=True)
"""

TINY = TINY_RUN


def _run(tmp_path: Path, switch: str | None) -> tuple[dict[str, object], bool]:
    """The probes' report, and whether the process went through Python's module teardown."""
    env = {k: v for k, v in os.environ.items() if k not in (bootstrap.SWITCH, "_RLRUN_FAST_START_SKIP")}
    if switch is not None:
        env[bootstrap.SWITCH] = switch
    done = subprocess.run(
        [sys.executable, "-c", RUN, *TINY, f"hydra.run.dir={tmp_path / 'run'}"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "model.zip").exists()
    lines = done.stdout.splitlines()
    report = json.loads(next(line for line in lines if line.startswith("{")))
    return report, "module teardown" in lines


def test_a_run_installs_every_measure_and_ends_quickly(tmp_path: Path) -> None:
    report, torn_down = _run(tmp_path, None)
    assert report["installed"] == ["gc_pause", "lazy_dynamo", "quick_exit"]
    assert report["stand_in"] and not report["real_dynamo"]  # torch._dynamo is the stand-in after training
    assert report["collecting"] and report["frozen"] > 100_000  # paused at start, resumed when training started
    assert not torn_down


@pytest.mark.parametrize("switch", ["0", "off"])
def test_the_switch_turns_every_measure_off(tmp_path: Path, switch: str) -> None:
    report, torn_down = _run(tmp_path, switch)
    assert report["installed"] == []
    assert report["real_dynamo"] and not report["stand_in"]  # torch's optimizers imported the real module
    assert report["collecting"] and report["frozen"] == 0  # never paused, so never frozen
    assert torn_down  # the usual interpreter exit


@pytest.mark.parametrize(
    ("switch", "skip", "on"),
    [
        (None, None, True),
        ("1", None, True),
        ("0", None, False),
        (" False ", None, False),
        ("no", None, False),
        (None, "gc_pause,quick_exit", False),
        (None, "lazy_dynamo", True),
    ],
)
def test_one_switch_read_in_one_place(
    monkeypatch: pytest.MonkeyPatch, switch: str | None, skip: str | None, on: bool
) -> None:
    for name, value in ((bootstrap.SWITCH, switch), ("_RLRUN_FAST_START_SKIP", skip)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert bootstrap.enabled("quick_exit") is on
    with pytest.raises(ValueError, match="no start-up measure 'quick-exit'"):
        bootstrap.enabled("quick-exit")


ENTRY = """\
import atexit, sys
from rlrun.startup import bootstrap


@bootstrap.entry
def main(argv=None):
    print("argv", argv)
    sys.exit(int(sys.argv[1]))


class Teardown:
    def __del__(self):
        print("module teardown", flush=True)


teardown = Teardown()
atexit.register(lambda: print("atexit", sorted(bootstrap.installed()), flush=True))
if sys.argv[2] == "console":
    main()
try:
    main(["--json"])  # from Python, with arguments: a plain function
except SystemExit as exit_:
    print("raised", exit_.code)
"""


@pytest.mark.parametrize(
    ("how", "switch", "status", "out"),
    [
        ("console", None, 3, "argv None\natexit ['lazy_dynamo', 'quick_exit']\n"),
        ("console", "0", 3, "argv None\natexit []\nmodule teardown\n"),
        ("call", None, 0, "argv ['--json']\nraised 3\natexit ['lazy_dynamo']\nmodule teardown\n"),
    ],
    ids=["console", "console-switched-off", "called-with-arguments"],
)
def test_entries_install_first_and_end_through_the_bootstrap(
    how: str, switch: str | None, status: int, out: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != bootstrap.SWITCH}
    if switch is not None:
        env[bootstrap.SWITCH] = switch
    done = subprocess.run([sys.executable, "-c", ENTRY, "3", how], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (status, out), done.stderr
