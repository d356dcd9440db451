"""Signatures bound to their run: every manifest names its run (id, config without total_timesteps), run.json's
status changes are signed, and what was signed for another run is not trusted; folders signed before still resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from rlrun.config.errors import UserError
from rlrun.record import signatures
from rlrun.run import snapshots
from rlrun.run.resume_state import load_target
from rlrun.run.training import resume
from tests import forked_commands
from tests.rlrun.helpers import status
from tests.rlrun.resume_helpers import interrupted

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of this user's stopped after its snapshots at 256 and 512 steps (each test copies it)."""
    return interrupted(tmp_path_factory.mktemp("stopped") / "run").parents[1]


def copy(stopped: Path, to: Path) -> Path:
    shutil.copytree(stopped, to)
    return to


def manifest(path: Path) -> dict:
    return json.loads(path.read_text())


def test_every_manifest_names_its_run(stopped: Path) -> None:
    run = manifest(stopped / signatures.RUN_MANIFEST)[signatures.RUN]
    assert set(run) == {"id", "config"} and run["config"] == signatures.config_identity(stopped)
    for snapshot in snapshots.list_snapshots(stopped / "snapshots"):
        assert manifest(snapshot / snapshots.MANIFEST)[signatures.RUN] == run


def test_a_snapshot_copied_from_another_run_is_not_trusted(stopped: Path, tmp_path: Path) -> None:
    run_a, run_b = copy(stopped, tmp_path / "a"), copy(stopped, tmp_path / "b")
    (run_b / signatures.RUN_MANIFEST).unlink()
    signatures.trust_folder(run_b)  # B: another run (its own id), the same config, signed by the same user
    newest = snapshots.list_snapshots(run_b / "snapshots")[-1]
    shutil.rmtree(newest)
    shutil.copytree(run_a / "snapshots" / newest.name, newest)  # A's snapshot at the same step
    with pytest.raises(UserError, match="signed for another run") as refused:
        resume(run_b, progress_bar="false")
    assert f"rlrun-trust {run_b}" in str(refused.value)
    assert status(run_b) == "failed"  # untouched


def test_a_status_changed_after_signing_is_not_trusted(stopped: Path, tmp_path: Path) -> None:
    run_dir = copy(stopped, tmp_path / "run")
    assert status(run_dir) == "failed"
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, "status": "interrupted"}))
    with pytest.raises(UserError, match="run.json changed after it was signed"):
        load_target(run_dir)


def test_a_running_record_left_unsigned_by_a_sigkill_resumes_as_interrupted(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    killed = forked_commands.run(
        ["-m", "tests.rlrun.kill_during_snapshot", str(run_dir), "step-700", "env=gridworld"], cwd=REPO, timeout=300
    )
    assert killed.returncode == -9, killed.stderr
    assert status(run_dir) == "running"
    signed = manifest(run_dir / signatures.RUN_MANIFEST)["files"]["run.json"]
    assert signed != signatures.sha256(run_dir / "run.json")  # rewritten since it was signed (a heartbeat)
    resume(run_dir, progress_bar="false")
    assert status(run_dir) == "completed"
    signatures.check_folder(run_dir, "test")  # its last record signed


def test_a_continued_run_stays_itself(stopped: Path, tmp_path: Path) -> None:
    run_dir = copy(stopped, tmp_path / "run")
    before = manifest(run_dir / signatures.RUN_MANIFEST)[signatures.RUN]
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "total_timesteps": 4096}))
    signatures.sign_run(run_dir)  # what a continuation does once it has written its larger budget
    assert manifest(run_dir / signatures.RUN_MANIFEST)[signatures.RUN] == before
    signatures.check_folder(run_dir, "test")


def as_main_signed_it(run_dir: Path) -> None:
    """The manifests as rlrun signed them before they named their run (the current main's)."""
    for path in [run_dir / signatures.RUN_MANIFEST, *run_dir.glob(f"snapshots/*/{snapshots.MANIFEST}")]:
        data = manifest(path)
        data.pop(signatures.RUN)
        path.write_text(json.dumps(signatures.signed(data)))


def test_a_folder_signed_before_manifests_named_runs_still_resumes(stopped: Path, tmp_path: Path) -> None:
    run_dir = copy(stopped, tmp_path / "run")
    as_main_signed_it(run_dir)
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, "status": "interrupted"}))  # main signed no status
    resume(run_dir, progress_bar="false")
    assert status(run_dir) == "completed"
    run = manifest(run_dir / signatures.RUN_MANIFEST)[signatures.RUN]
    for snapshot in snapshots.list_snapshots(run_dir / "snapshots"):  # adopted by the run, signed again
        assert manifest(snapshot / snapshots.MANIFEST)[signatures.RUN] == run
    signatures.check_folder(run_dir, "test")
