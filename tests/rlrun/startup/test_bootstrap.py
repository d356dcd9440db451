"""One bootstrap decides the start-up measures; ``RLRUN_FAST_START=0`` turns them all off, and none of them reaches
into a private name (nothing stands in for a module of torch's, the process ends as Python ends it).

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
# An object of __main__ says goodbye when Python's module teardown reaches it: the process ends as Python ends it.
RUN = """\
import gc, json, os, runpy, sys
from rlrun.startup import bootstrap


class Teardown:
    def __del__(self, write=os.write):
        write(1, b"module teardown\\n")


teardown = Teardown()


def report():
    dynamo = sys.modules.get("torch._dynamo")
    print(json.dumps({
        "installed": sorted(bootstrap.installed()),
        "real_dynamo": dynamo is not None and hasattr(dynamo, "__file__"),
        "frozen": gc.get_freeze_count(),
        "collecting": gc.isenabled(),
    }), flush=True)


sys.argv = ["rlrun", *sys.argv[1:]]
try:
    runpy.run_module("rlrun", run_name="__main__", alter_sys=True)
finally:  # the run's end, before the exit handlers (one gives the frozen objects back to the collector)
    report()
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


def test_a_run_installs_every_measure_and_touches_no_private_name(tmp_path: Path) -> None:
    report, _ = _run(tmp_path, None)  # (Python may skip __main__'s teardown for frozen objects: not asserted)
    assert report["installed"] == ["gc_pause"]
    assert report["real_dynamo"]  # torch's own module, as torch's optimizers import it: no stand-in
    assert report["collecting"] and report["frozen"] > 100_000  # paused at start, resumed when training started


@pytest.mark.parametrize("switch", ["0", "off"])
def test_the_switch_turns_every_measure_off(tmp_path: Path, switch: str) -> None:
    report, torn_down = _run(tmp_path, switch)
    assert report["installed"] == []
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
        (None, "gc_pause,preload", False),
        (None, "preload", True),
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
    assert bootstrap.enabled("gc_pause") is on
    with pytest.raises(ValueError, match="no start-up measure 'quick_exit'"):
        bootstrap.enabled("quick_exit")


def test_importing_rlrun_installs_nothing_and_stands_in_for_no_module() -> None:
    """No start-up measure acts by being imported: every module of rlrun imported, nothing paused, no module of
    another library replaced, no import hook added."""
    script = (
        "import gc, sys, pkgutil, importlib, rlrun\n"
        "before = list(sys.meta_path)\n"
        "skip = ('rlrun.sweep.fork_server', 'rlrun.tune.seed_fork_server')  # the fork servers' preloads\n"
        "for m in pkgutil.walk_packages(rlrun.__path__, 'rlrun.'):\n"
        "    if m.name not in skip and not m.name.startswith(('rlrun.conf', 'rlrun.envs')):\n"
        "        importlib.import_module(m.name)\n"
        "from rlrun.startup import bootstrap\n"
        "ours = lambda obj: type(obj).__module__.startswith('rlrun') or 'rlrun' in str(getattr(obj, '__file__', ''))\n"
        "mine = ('rlrun', 'hydra_plugins.rlrun', '__editable__')\n"
        "foreign = [n for n, m in list(sys.modules.items()) if m is not None and not n.startswith(mine) and ours(m)]\n"
        "hooks = [f for f in sys.meta_path if f not in before and type(f).__module__.startswith('rlrun')]\n"
        "print(sorted(bootstrap.installed()), gc.isenabled(), hooks, foreign)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] True [] []"
