"""``rlrun-runs`` lists the runs under a folder with their status, steps, scores, age and the command that continues
each (rlrun/table/run_list.py); ``resume=`` of a mistyped stamp names the nearest run (rlrun/record/nearest_runs.py).

One real tiny run is trained per module; the others are its copies with their ``run.json`` edited and signed as
rlrun signs a status it writes."""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.record import signatures
from rlrun.record.run_state import read_state
from rlrun.run.training import train
from rlrun.table import run_list
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

STAMP = "2026-11-26_23-54-44-uj23"
STATUSES = ("completed", "interrupted", "failed", "running", "killed")


def _env() -> dict[str, str]:
    """This process's environment (the session's trust key) with this install's console scripts first on PATH."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _edited(source: Path, folder: Path, **changes: object) -> Path:
    shutil.copytree(source, folder)
    record = json.loads((folder / "run.json").read_text())
    record.update(changes)
    (folder / "run.json").write_text(json.dumps(record))
    signatures.sign_record(folder)  # as rlrun signs a status it writes
    return folder


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``outputs/runs/gridworld-ppo/<stamp>-<status>`` for each of :data:`STATUSES`, from one real run."""
    root = tmp_path_factory.mktemp("list")
    trained = root / "trained"
    train(shrink(compose_config("env=gridworld", "algo=ppo"), 128), trained)
    runs = root / "outputs" / "runs" / "gridworld-ppo"
    dead = forked_commands.run(["-c", "import os; print(os.getpid())"])
    here = {"host": platform.node(), "final": None}
    shutil.copytree(trained, runs / f"{STAMP[:-5]}-comp")
    _edited(trained, runs / f"{STAMP[:-5]}-intr", status="interrupted", timesteps=64, final=None)
    _edited(trained, runs / f"{STAMP[:-5]}-fail", status="failed", error="Traceback...\nRuntimeError: boom", final=None)
    _edited(trained, runs / f"{STAMP[:-5]}-runn", status="running", pid=os.getpid(), **here)
    _edited(trained, runs / f"{STAMP[:-5]}-kill", status="running", pid=int(dead.stdout), **here)
    _edited(trained, runs / "evil\x1b[2J", status="interrupted")
    return root


def _listed(root: Path) -> dict[str, tuple[str, str]]:
    """``rlrun-runs`` in ``root``: each run's line and the line under it, by the last part of its folder's name."""
    done = subprocess.run(["rlrun-runs"], cwd=root, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    runs = {
        line.split(":")[0].rsplit("-", 1)[-1]: (line, then.strip())
        for line, then in zip(lines[::2], lines[1::2], strict=True)
    }
    assert len(runs) == 6 and all(line.startswith("outputs/runs/gridworld-ppo/") for line, _ in runs.values())
    return runs


def test_each_run_is_listed_with_its_status_steps_scores_and_command(outputs: Path) -> None:
    listed = _listed(outputs)
    folder = f"outputs/runs/gridworld-ppo/{STAMP[:-5]}"
    line = r"{}: {}, {} steps, last eval -?\d+\.\d{{3}}{}, age \d+:\d\d:\d\d"
    final = r", final -?\d+\.\d{3}"
    expected = {  # status, steps, whether it has a final evaluation
        "comp": ("completed", "128/128", final),
        "intr": ("interrupted", "64/128", ""),
        "fail": ("failed", "128/128", ""),
        "runn": ("running", "128/128", ""),
        "kill": ("interrupted", "128/128", ""),  # a running record whose process is gone
    }
    for key, (status, steps, has_final) in expected.items():
        assert re.fullmatch(line.format(re.escape(f"{folder}-{key}"), status, steps, has_final), listed[key][0]), key
    assert listed["comp"][1] == f"rlrun resume={folder}-comp total_timesteps=256"  # trained on to twice its budget
    assert listed["intr"][1] == f"rlrun resume={folder}-intr"
    assert listed["fail"][1] == f"rlrun resume={folder}-fail"  # from its newest snapshot
    assert listed["runn"][1] == f"(still running: pid {os.getpid()} on {platform.node()})"
    evil = next(text for key, text in listed.items() if "evil" in key)
    assert "\x1b" not in "".join(evil) and "evil\\x1b[2J" in evil[0]  # a forged name, escaped


def test_the_listed_command_continues_the_run_when_pasted(outputs: Path) -> None:
    command = _listed(outputs)["intr"][1]
    done = subprocess.run(command, shell=True, cwd=outputs, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    folder = outputs / shlex.split(command)[1].removeprefix("resume=")
    assert read_state(folder).status == "completed"


def test_a_folder_that_is_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no such folder"):
        run_list.list_runs([tmp_path / "nothere"])
    assert run_list.list_runs([tmp_path]) == [f"no runs under {tmp_path}"]


def test_resume_of_a_mistyped_stamp_names_the_nearest_runs(outputs: Path) -> None:
    mistyped = f"outputs/runs/gridworld-ppo/{STAMP[:-5]}-intt"
    done = forked_commands.run(["-m", "rlrun", f"resume={mistyped}"], cwd=outputs, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"resume={mistyped}: no such folder" in done.stderr
    assert f"did you mean python -m rlrun resume=outputs/runs/gridworld-ppo/{STAMP[:-5]}-intr" in done.stderr
