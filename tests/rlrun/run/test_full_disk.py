"""A full disk is a clear error: the run ends ``failed`` with the error in ``run.json`` (or in the log when that
cannot be written), exit 1, one line naming the file and the cause, no traceback; the newest complete snapshot
stays loadable; a resume removes rlrun's own leftovers first, so on a still-full disk it fails just as cleanly
and after freeing space it completes.

The run trains on a real small filesystem (a tmpfs mounted for the test, which needs root); where mounting is
not permitted the test is skipped, and the tests below it inject the same ``OSError`` at each write instead.
"""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from stable_baselines3 import SAC

from rlrun.record.formats import WriteFailed, write_text
from rlrun.record.run_record import RunRecord
from rlrun.run import snapshots
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

# SAC on Pendulum with a replay buffer of about 800 KB in each snapshot, one snapshot kept: training itself is
# random actions until its last step, so the run is fast; a snapshot every 400 steps
SAC_RUN = [
    "env=pendulum",
    "algo=sac",
    "~tuned",
    "total_timesteps=1600",
    "algo.learning_starts=1599",
    "algo.buffer_size=20000",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=1600",
    "eval.episodes=1",
    "eval.final_episodes=1",
    "eval.n_envs=1",
    "snapshot.every=400",
    "snapshot.keep=1",
    "progress_bar=false",
]
BUFFER_BYTES = 800_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MB tmpfs of the test's own, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}); the injected-error tests cover it")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(mount)], check=True)


def fill(disk: Path, name: str, leave: int = 0) -> Path:
    """A file taking all the free space of ``disk`` but ``leave`` bytes (to the last page when 0)."""
    filler = disk / name
    with open(filler, "wb", buffering=0) as f:
        remaining = shutil.disk_usage(disk).free - leave
        try:
            while remaining > 0:
                remaining -= f.write(b"\0" * min(remaining, 1 << 16))
            while leave == 0:
                f.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return filler


def rlrun(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun", *args], cwd=cwd, timeout=300)


def assert_one_line_failure(result: subprocess.CompletedProcess[str]) -> str:
    """Exit 1, no traceback anywhere, and one line on stderr naming a file of the run (``run``, relative to the
    command's folder) and the cause."""
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "Logging error" not in output, output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "cannot write run/" in lines[0] and "No space left on device [ENOSPC]" in lines[0], lines[0]
    return lines[0]


def leftovers(run_dir: Path) -> list[Path]:
    return [*run_dir.glob(".*.tmp*"), *run_dir.glob("snapshots/.tmp-*"), *run_dir.glob("snapshots/*/.*.tmp")]


def test_a_full_disk_fails_the_run_in_one_line_and_a_resume_after_freeing_space_completes(small_disk: Path) -> None:
    run_dir = small_disk / "run"
    fill(small_disk, "filler", leave=BUFFER_BYTES + 500_000)  # one snapshot fits, not two at once

    first = rlrun(*SAC_RUN, "hydra.run.dir=run", cwd=small_disk)
    line = assert_one_line_failure(first)
    assert line.endswith(" resume=run")
    data = json.loads((run_dir / "run.json").read_text())
    assert data["status"] == "failed" and "No space left on device" in data["error"], data
    assert leftovers(run_dir) == []  # the failed snapshot's folder is gone: that is what let run.json say so
    newest = snapshots.newest_complete(run_dir / "snapshots")
    assert newest is not None and snapshots.step_of(newest) == 400
    SAC.load(newest / "model.zip")  # the newest complete snapshot loads
    assert (newest / snapshots.BUFFER).is_file()

    # a resume on a disk that is still full: the leftovers of a killed write go first, then a clean failure
    (run_dir / "snapshots" / ".tmp-step-0000000800").mkdir()
    (run_dir / "snapshots" / ".tmp-step-0000000800" / "model.zip").write_bytes(b"\0" * 100_000)
    (run_dir / ".run.json.tmp").write_bytes(b"")
    fill(small_disk, "filler-2")
    second = rlrun("resume=run", cwd=small_disk)
    assert_one_line_failure(second)
    assert leftovers(run_dir) == []
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"
    assert snapshots.newest_complete(run_dir / "snapshots") == newest

    # nothing left to free: the resume fails on run.json itself, and leaves it as it was
    fill(small_disk, "filler-3")
    before = (run_dir / "run.json").read_bytes()
    third = rlrun("resume=run", cwd=small_disk)
    assert "cannot write run/run.json:" in assert_one_line_failure(third)
    assert (run_dir / "run.json").read_bytes() == before and leftovers(run_dir) == []

    for name in ("filler", "filler-2", "filler-3"):
        (small_disk / name).unlink()
    last = rlrun("resume=run", cwd=small_disk)
    assert last.returncode == 0, last.stdout + last.stderr
    data = json.loads((run_dir / "run.json").read_text())
    assert data["status"] == "completed" and data["error"] is None and data["timesteps"] == 1600


# Without a small filesystem: the same OSError injected at each write


def no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_write_names_its_file_and_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "run.json"
    path.write_text("before")
    monkeypatch.setattr("os.fsync", no_space)
    with pytest.raises(WriteFailed) as failed:
        write_text(path, "after", durable=True)
    assert str(failed.value) == f"cannot write {path}: No space left on device [ENOSPC]"
    assert path.read_text() == "before" and sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_a_failure_run_json_cannot_record_is_logged(tmp_path: Path, monkeypatch, caplog) -> None:
    record = RunRecord(tmp_path, {"status": "running"})
    monkeypatch.setattr("os.fsync", no_space)
    assert not record.fail(WriteFailed(errno.ENOSPC, "No space left on device", str(tmp_path / "x")))
    assert "run.json could not record the failure" in caplog.text and f"cannot write {tmp_path / 'x'}" in caplog.text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "target",
    [
        "stable_baselines3.common.base_class.BaseAlgorithm.save",  # model.zip of a snapshot
        "stable_baselines3.common.off_policy_algorithm.OffPolicyAlgorithm.save_replay_buffer",
        "pickle.dump",  # state.pkl
        "rlrun.run.snapshots._write_manifest",
        "rlrun.record.run_record.RunRecord.progress",  # run.json while running
    ],
    ids=["model", "replay-buffer", "state", "manifest", "run-json"],
)
def test_a_failed_write_at_each_place_ends_the_run_failed_with_the_error(
    tmp_path: Path, monkeypatch, target: str
) -> None:
    cfg = shrink(compose_config("env=pendulum", "algo=sac", "~tuned"), steps=256)
    run_dir = tmp_path / "run"
    monkeypatch.setattr(target, no_space)
    with pytest.raises(WriteFailed, match="No space left on device"):
        train(cfg, run_dir)
    data = json.loads((run_dir / "run.json").read_text())
    assert data["status"] == "failed" and "No space left on device [ENOSPC]" in data["error"]
    assert f"cannot write {run_dir}" in data["error"]
    assert leftovers(run_dir) == []
