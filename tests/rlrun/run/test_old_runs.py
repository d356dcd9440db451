"""Run folders written by older versions resume, evaluate and re-run as the same config, each through its command
line on a copy, trusted first with ``rlrun-trust``'s call: tests/fixtures/aaa907b/ (before the envs became
``rlrun.envs``; they predate signatures) and tests/fixtures/bc2a536/ (before ``rlrun.build`` became ``rlrun.make``
and other modules moved; signed under another user's key).

The commands run in ``tmp_path``: from the repository's root, the folder ``envs/`` would be importable as the
old top-level package and hide what an installed rlrun does.
"""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
from pathlib import Path

from rlrun.record import signatures
from tests import forked_commands

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLD = FIXTURES / "aaa907b"
BEFORE_MAKE = FIXTURES / "bc2a536"


def copy_of(fixture: str, tmp_path: Path, written_by: Path = OLD) -> Path:
    target = tmp_path / "outputs" / fixture
    shutil.copytree(written_by / fixture, target)
    for run_dir in signatures.run_folders(target):  # written before rlrun signed run folders: trusted, as a user would
        signatures.trust_folder(run_dir)
    return target


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run([*args], cwd=cwd, timeout=300)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def test_resume_of_a_run_interrupted_before_the_rename_completes(tmp_path: Path) -> None:
    run_dir = copy_of("runs/gridworld-ppo/interrupted", tmp_path)
    assert record(run_dir)["status"] == "interrupted" and record(run_dir)["timesteps"] == 512
    result = run(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "could not be restored" not in result.stderr  # the old snapshot's envs were put back: an exact resume
    assert "resume mode: exact, a run recorded before resume modes" in result.stdout + result.stderr
    done = record(run_dir)
    assert done["resume_mode"] == "exact"  # recorded before resume modes existed: its snapshots hold its envs
    assert done["status"] == "completed" and done["timesteps"] == 2048 and done["final"]["episodes"] == 2
    assert [r["from_step"] for r in done["resumes"]] == [512]
    with open(run_dir / "eval.csv") as f:
        assert [int(row[0]) for row in list(csv.reader(f))[1:]] == [512, 1024, 1536, 2048]
    assert (run_dir / "config.yaml").read_text() == (OLD / "runs/gridworld-ppo/interrupted/config.yaml").read_text()


def test_rlrun_eval_of_a_run_completed_before_the_rename(tmp_path: Path) -> None:
    run_dir = copy_of("runs/gridworld-ppo/completed", tmp_path)
    for snapshot in ("final", "latest"):  # the run's own model and VecNormalize statistics, and its snapshot's
        result = run(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "2", "--snapshot", snapshot], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "over 2 episodes" in result.stdout


def test_rerunning_a_sweep_made_before_the_rename_skips_its_completed_jobs(tmp_path: Path) -> None:
    sweep = copy_of("sweeps/old", tmp_path)
    before = {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file() and p.name in ("model.zip", "run.json")}
    command = shlex.split(json.loads((sweep / "sweep.json").read_text())["command"])
    assert command[:3] == ["python", "-m", "rlrun"]
    result = run([*command[1:], "fused_adam=false"], tmp_path)  # the Adam of its day (today's default fuses)
    assert result.returncode == 0, result.stderr
    summary = json.loads((sweep / "sweep.json").read_text())
    assert summary["counts"]["skipped"] == 2 and summary["counts"]["planned"] == 2
    assert [job["status"] for job in summary["jobs"]] == ["skipped", "skipped"]
    assert {p: p.read_bytes() for p in before} == before  # the completed jobs are untouched


def test_resume_of_a_run_interrupted_before_the_modules_moved_completes(tmp_path: Path) -> None:
    run_dir = copy_of("runs/gridworld-ppo/interrupted", tmp_path, BEFORE_MAKE)
    assert record(run_dir)["status"] == "interrupted" and record(run_dir)["timesteps"] == 512
    result = run(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "could not be restored" not in result.stderr
    done = record(run_dir)
    assert done["status"] == "completed" and done["timesteps"] == 2048 and done["final"]["episodes"] == 2
    with open(run_dir / "eval.csv") as f:
        assert [int(row[0]) for row in list(csv.reader(f))[1:]] == [512, 1024, 1536, 2048]


def test_rlrun_eval_of_a_run_completed_before_the_modules_moved(tmp_path: Path) -> None:
    run_dir = copy_of("runs/gridworld-ppo/completed", tmp_path, BEFORE_MAKE)
    for snapshot in ("final", "latest"):
        result = run(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "2", "--snapshot", snapshot], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "over 2 episodes" in result.stdout
