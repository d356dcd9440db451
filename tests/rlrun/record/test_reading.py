"""Files of a run folder are read within bounds: a YAML alias bomb, a deeply nested JSON or a huge (or linked)
eval.csv is a damaged run (one warning for tables, exit 2 for resume=), never a hang or a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rlrun.record import signatures
from tests import forked_commands
from tests.rlrun.resume_helpers import interrupted
from tests.rlrun.table.helpers import make_run

# About 1 KB of YAML that expands to 9**9 strings
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
NESTED = "[" * 100_000 + "]" * 100_000
HUGE = 4 << 30  # a sparse file: nothing of it is written


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run([*args], cwd=cwd, timeout=120)


def test_the_bomb_is_small_and_refused_by_the_bounded_reader(tmp_path: Path) -> None:
    from rlrun.record import reading

    assert len(BOMB) < 1100
    (tmp_path / "config.yaml").write_text(BOMB)
    with pytest.raises(reading.OverBound, match="expands to more than"):
        reading.load_yaml(tmp_path / "config.yaml")
    (tmp_path / "run.json").write_text(NESTED)
    with pytest.raises(reading.OverBound, match="nests deeper"):
        reading.load_json(tmp_path / "run.json")


def huge_file(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(HUGE)


@pytest.mark.parametrize(
    "damage",
    [
        "alias bomb",
        "nested run.json",
        "nested config.yaml",
        "linked eval.csv",
        "huge eval.csv",
        "fifo run.json",
        "fifo config.yaml",
        "fifo eval.csv",
        "hard-linked run.json",
    ],
)
def test_rlrun_table_leaves_a_run_over_a_bound_out_with_one_warning(tmp_path: Path, damage: str) -> None:
    runs = tmp_path / "runs"
    make_run(runs / "good", 0, 1.0)
    bad = make_run(runs / "bad", 1, 2.0)
    if damage == "alias bomb":
        (bad / "config.yaml").write_text(BOMB)
    elif damage == "nested run.json":
        (bad / "run.json").write_text(NESTED)
    elif damage == "nested config.yaml":
        (bad / "config.yaml").write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    elif damage == "linked eval.csv":
        huge_file(tmp_path / "outside.csv")
        (bad / "eval.csv").unlink()
        (bad / "eval.csv").symlink_to(tmp_path / "outside.csv")
    elif damage.startswith("fifo"):  # never waited on: run() times out (the hang guard) if it is
        (bad / damage.split()[1]).unlink()
        os.mkfifo(bad / damage.split()[1])
    elif damage == "hard-linked run.json":
        os.link(bad / "run.json", tmp_path / "outside.json")
    else:
        huge_file(bad / "eval.csv")
    done = run(["-m", "rlrun.cli.table", str(runs), "--out", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("leaving out") == 1 and str(bad) in done.stderr, done.stderr


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return interrupted(tmp_path_factory.mktemp("stopped") / "run").parents[1]


@pytest.mark.parametrize("trusted", [False, True], ids=["received", "trusted"])
@pytest.mark.parametrize("damage", ["alias bomb", "nested run.json"])
def test_resume_refuses_a_file_over_a_bound(stopped: Path, tmp_path: Path, damage: str, trusted: bool) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(stopped, run_dir)
    if damage == "alias bomb":
        (run_dir / "config.yaml").write_text(BOMB)
    else:
        (run_dir / "run.json").write_text(NESTED)
    if trusted:
        signatures.trust_folder(run_dir)  # even signed, a file over a bound is damaged
    done = run(["-m", "rlrun", f"resume={run_dir}"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert not os.path.exists(run_dir / ".lock")


@pytest.mark.parametrize("name", ["run.json", "config.yaml", "eval.csv"])
def test_resume_refuses_a_fifo_at_once(stopped: Path, tmp_path: Path, name: str) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(stopped, run_dir)
    (run_dir / name).unlink()
    os.mkfifo(run_dir / name)
    done = run(["-m", "rlrun", f"resume={run_dir}"], tmp_path)  # its timeout is the hang guard
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert name in done.stderr and "FIFO" in done.stderr, done.stderr
    assert not os.path.lexists(run_dir / ".lock")
