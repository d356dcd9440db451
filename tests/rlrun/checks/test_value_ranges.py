"""Every settable value is checked before work starts: a value out of range is exit 2 with one message naming
the key and the fix, no traceback, nothing created (seed, torch_threads, rlrun-eval --seed, rlrun-table on a
folder it cannot write, rlrun-track sync into a damaged MLflow store)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlrun.record import signatures
from tests import forked_commands
from tests.rlrun.table.helpers import make_run

CORES = len(os.sched_getaffinity(0))  # the torch_threads cap


def command(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run([*args], cwd=cwd, timeout=300)


def assert_refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "fix:" in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("seed=18446744073709551616", ["seed=18446744073709551616", "0 to 2**32 - 1"]),
        ("seed=4294967296", ["seed=4294967296"]),
        ("seed=-1", ["seed=-1"]),
        (f"torch_threads={CORES + 1}", [f"at most {CORES}", "cores"]),
        ("torch_threads=100000", ["torch_threads=100000"]),
    ],
)
def test_a_run_value_out_of_range_is_refused_before_anything_is_created(
    tmp_path: Path, value: str, words: list[str]
) -> None:
    result = command(["-m", "rlrun", "env=gridworld", "algo=ppo", "total_timesteps=64", value], tmp_path)
    assert_refused(result, *words)
    assert not (tmp_path / "outputs").exists()


def test_the_largest_seed_numpy_takes_is_accepted(tmp_path: Path) -> None:
    result = command(["-m", "rlrun", "env=gridworld", "algo=ppo", "seed=4294967295", "--cfg", "job"], tmp_path)
    assert result.returncode == 0, result.stderr


def test_rlrun_eval_refuses_a_negative_seed(tmp_path: Path) -> None:
    assert_refused(command(["-m", "rlrun.cli.eval", str(tmp_path), "--seed", "-1"], tmp_path), "--seed -1")


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A read-only filesystem (a tmpfs mounted ro; root writes through folder permissions), else a folder of
    sysfs, which no one may create files in."""
    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "none", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        yield Path("/sys/kernel")
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_rlrun_table_refuses_an_out_folder_it_cannot_write(tmp_path: Path, read_only_folder: Path) -> None:
    for seed in range(2):
        make_run(tmp_path / f"runs/seed-{seed}", seed, 1.0 + seed)
    for out in (read_only_folder, read_only_folder / "tables"):
        result = command(["-m", "rlrun.cli.table", str(tmp_path / "runs"), "--out", str(out)], tmp_path)
        assert_refused(result, f"--out {out} cannot be written", "give --out a folder you can write")
    assert not (tmp_path / "runs" / "table.md").exists()


def test_rlrun_track_sync_refuses_a_damaged_store(tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    run_dir = make_run(tmp_path / "outputs" / "runs" / "seed-0", 0, 1.0)
    signatures.trust_folder(run_dir)  # a folder made by hand: trusted, so sync reaches the store (not_trusted first)
    store = tmp_path / "outputs" / "mlflow.db"
    store.write_bytes(b"this is no SQLite database" * 100)
    for args in ([], ["--tracking-uri", f"sqlite:///{store}"]):
        result = command(["-m", "rlrun.cli.track", "sync", str(run_dir), *args], tmp_path)
        assert_refused(result, f"the MLflow store {store} is not a SQLite database", f"mv {store} {store}.damaged")
    assert store.read_bytes().startswith(b"this is no SQLite database")
    assert not (run_dir / "tracking-unsent.jsonl").exists()
