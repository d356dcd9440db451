"""The order of a resume: the read-only trust check, then the lock (never through a link), then the rest; no
file rlrun writes in a run folder is written through a link, and liveness is the lock's, not run.json's pid."""

from __future__ import annotations

import json
import os
import platform
import shutil
from pathlib import Path

import pytest

from rlrun.config.errors import UserError
from rlrun.record import formats, lock, regular_files, signatures
from rlrun.run.training import resume
from tests.rlrun.helpers import cli, status
from tests.rlrun.resume_helpers import interrupted

OUTSIDE = "precious\n"


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of this user's, stopped after two snapshots (kept pristine: each test copies it)."""
    return interrupted(tmp_path_factory.mktemp("stopped") / "run").parents[1]


def copy_of(stopped: Path, tmp_path: Path) -> tuple[Path, Path]:
    run_dir, outside = tmp_path / "run", tmp_path / "outside.txt"
    shutil.copytree(stopped, run_dir)
    outside.write_text(OUTSIDE)
    return run_dir, outside


@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize("trusted", [True, False], ids=["own", "received"])
def test_a_lock_link_to_a_file_outside_is_never_written(
    stopped: Path, tmp_path: Path, trusted: bool, link: str
) -> None:
    run_dir, outside = copy_of(stopped, tmp_path)
    if link == "symbolic":
        (run_dir / lock.LOCK_NAME).symlink_to(outside)
    else:  # the same file system: the file itself, under a second name
        os.link(outside, run_dir / lock.LOCK_NAME)
    if not trusted:
        (run_dir / signatures.RUN_MANIFEST).unlink()
    done = cli(["-m", "rlrun", f"resume={run_dir}"], tmp_path)
    assert outside.read_text() == OUTSIDE
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert (f".lock (a {link} link" if trusted else "not trusted") in done.stderr, done.stderr
    with pytest.raises(UserError):
        resume(run_dir, progress_bar="false")
    assert outside.read_text() == OUTSIDE and os.path.samefile(outside, run_dir / lock.LOCK_NAME)


def test_the_lock_itself_is_never_taken_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / lock.LOCK_NAME).symlink_to(outside)
    with pytest.raises(regular_files.NotRegularFile, match="symbolic link"):
        lock.acquire(tmp_path / "folder")
    (tmp_path / "folder" / lock.LOCK_NAME).unlink()
    os.mkfifo(tmp_path / "folder" / lock.LOCK_NAME)  # not a regular file: never opened for writing either
    with pytest.raises(UserError):
        lock.acquire(tmp_path / "folder")
    assert outside.read_text() == OUTSIDE


def test_a_link_under_a_temporary_name_is_replaced_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE)
    (tmp_path / ".run.json.tmp").symlink_to(outside)
    formats.write_json(tmp_path / "run.json", {"status": "running"})
    assert outside.read_text() == OUTSIDE and json.loads((tmp_path / "run.json").read_text())["status"] == "running"
    (tmp_path / "eval.csv").symlink_to(outside)
    with pytest.raises(regular_files.NotRegularFile):
        formats.open_for_writing(tmp_path / "eval.csv", append=True)
    assert outside.read_text() == OUTSIDE


def test_a_link_anywhere_in_a_resumed_folder_is_refused_before_the_lock(stopped: Path, tmp_path: Path) -> None:
    run_dir, outside = copy_of(stopped, tmp_path)
    (run_dir / "tb").rename(tmp_path / "tb")
    (run_dir / "tb").symlink_to(tmp_path / "tb")  # TensorBoard would write its events outside
    with pytest.raises(UserError, match="symbolic links.*tb"):
        resume(run_dir, progress_bar="false")
    assert not (run_dir / lock.LOCK_NAME).exists()


def test_a_running_record_whose_pid_is_another_process_resumes_when_the_lock_is_free(
    stopped: Path, tmp_path: Path
) -> None:
    run_dir, _ = copy_of(stopped, tmp_path)
    record = json.loads((run_dir / "run.json").read_text())
    record.update(status="running", pid=1, host=platform.node())  # pid 1 is alive, but holds no lock of the run
    (run_dir / "run.json").write_text(json.dumps(record))
    signatures.trust_folder(run_dir)
    done = cli(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], tmp_path)
    assert done.returncode == 0 and "kill 1" not in done.stderr, done.stderr
    assert status(run_dir) == "completed"


def test_a_received_running_record_that_names_another_budget_or_mode_is_not_trusted(
    stopped: Path, tmp_path: Path
) -> None:
    run_dir, _ = copy_of(stopped, tmp_path)
    record = json.loads((run_dir / "run.json").read_text())
    record.update(status="running")
    (run_dir / "run.json").write_text(json.dumps(record))
    signatures.trust_folder(run_dir)  # a run of this user's, killed while it trained
    forged = {**record, "total_timesteps": 1400, "budgets": [600, 1400], "resume_mode": "restart_episodes"}
    (run_dir / "run.json").write_text(json.dumps(forged))  # unsigned, as a running record may be
    done = cli(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not trusted" in done.stderr and "total_timesteps, budgets, resume_mode changed" in done.stderr
    assert json.loads((run_dir / "run.json").read_text()) == forged  # nothing trained, nothing signed
    assert signatures.unsigned_record(run_dir) is not None
