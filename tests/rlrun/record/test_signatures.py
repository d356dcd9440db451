"""Signatures of run folders (rlrun.record.signatures) and ``rlrun-trust``: the key, what verifies and what does not."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from rlrun.cli import trust
from rlrun.config.errors import UserError
from rlrun.record import signatures
from tests import forked_commands
from tests.rlrun.helpers import run_folder


def check(folder: Path) -> None:
    signatures.check_run(folder, ("config.yaml",), "resume")
    signatures.check_snapshots(folder, sorted(folder.glob("snapshots/step-*")), "resume")


def test_the_key_is_created_on_first_use_readable_by_its_owner_only(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(signatures.KEY_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "rlrun" / "trust.key"
    assert signatures.key_path() == path and not path.exists()
    payload = signatures.signed({"files": {}})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(path.read_bytes()) == 32
    assert signatures.verifies(payload)
    monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "elsewhere.key"))  # a cluster's shared home, say
    assert signatures.key_path() == tmp_path / "elsewhere.key" and not signatures.verifies(payload)


def test_a_signature_covers_every_field() -> None:
    payload = signatures.signed({"step": 256, "files": {"model.zip": "ab"}})
    assert signatures.verifies(payload) and signatures.verifies(json.loads(json.dumps(payload, indent=2)))
    assert not signatures.verifies({**payload, "files": {"model.zip": "cd"}})
    assert not signatures.verifies({k: v for k, v in payload.items() if k != "signature"})
    assert not signatures.verifies({**payload, "signature": "0" * 64}) and not signatures.verifies([payload])


def _first_signature(barrier: Any, queue: Any) -> None:
    barrier.wait()
    queue.put(signatures.signed({"a": 1})["signature"])


def test_processes_creating_the_key_at_once_agree_on_it(tmp_path: Path, monkeypatch) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(10):
        monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / f"key-{attempt}" / "trust.key"))
        barrier, queue = context.Barrier(4), context.Queue()
        workers = [context.Process(target=_first_signature, args=(barrier, queue)) for _ in range(4)]
        for worker in workers:
            worker.start()
        seen = {queue.get(timeout=60) for _ in workers}
        for worker in workers:
            worker.join()
        assert len(seen) == 1 and seen == {signatures.signed({"a": 1})["signature"]}
        assert [p.name for p in (tmp_path / f"key-{attempt}").iterdir()] == ["trust.key"]  # no leftovers


def test_an_own_folder_verifies(tmp_path: Path) -> None:
    check(run_folder(tmp_path / "run"))


@pytest.mark.parametrize(
    "change, message",
    [
        ("unsigned", "no signed run-manifest.json"),
        ("another key", "not signed with your trust key"),
        ("config", "config.yaml changed after it was signed"),
        ("snapshot manifest", "manifest.json is not signed with your trust key"),
    ],
)
def test_a_received_or_altered_folder_is_refused_naming_what_would_run(
    tmp_path: Path, monkeypatch, change: str, message: str
) -> None:
    folder = run_folder(tmp_path / "run", signed=change != "unsigned")
    if change == "another key":
        monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "other.key"))
    elif change == "config":
        (folder / "config.yaml").write_text("seed: 0\nwrappers:\n  x:\n    _target_: os.system\n")
    elif change == "snapshot manifest":
        manifest = folder / "snapshots" / "step-0000000256" / "manifest.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "score": 1.0}))
    with pytest.raises(UserError, match=message) as refused:
        check(folder)
    text = str(refused.value)
    assert "snapshots/step-0000000256/state.pkl" in text and f"rlrun-trust {folder}" in text
    assert ("os.system" if change == "config" else "rlrun.envs.wrappers.ScaleReward") in text
    assert refused.value.status == 2


def test_a_run_json_rewritten_since_signing_still_verifies(tmp_path: Path) -> None:
    folder = run_folder(tmp_path / "run")
    (folder / "run.json").write_text(json.dumps({"status": "running"}))  # the run's record keeps moving
    check(folder)


def test_rlrun_trust_signs_a_reviewed_folder_and_every_run_of_a_sweep(tmp_path: Path, capsys) -> None:
    sweep = tmp_path / "sweep"
    runs = [run_folder(sweep / "gridworld-ppo" / f"seed-{seed}", signed=False) for seed in (0, 1)]
    with pytest.raises(SystemExit) as ended:
        trust.main([str(sweep), "--yes"])
    assert ended.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("trusted")] == [f"trusted {run} (1 snapshot)" for run in runs]
    for run in runs:
        check(run)


@pytest.mark.parametrize("name, message", [("missing", "no such folder"), ("empty", "holds no run folder")])
def test_rlrun_trust_refuses_what_is_not_a_run_folder(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    done = forked_commands.run(["-m", "rlrun.cli.trust", str(tmp_path / name)], timeout=60)
    assert done.returncode == 2 and f"rlrun-trust: error: {tmp_path / name}" in done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["empty"]


def killed_while_running(tmp_path: Path, manifest_holds_fields: bool = True) -> Path:
    """A run folder whose signed record says ``running`` (a run killed while it trained); with
    ``manifest_holds_fields`` False, its run manifest as an rlrun signed it before it held run.json's fields."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.yaml").write_text("seed: 0\ntotal_timesteps: 600\n")
    record = {"status": "running", "total_timesteps": 600, "timesteps": 200, "resume_mode": "exact"}
    (folder / "run.json").write_text(json.dumps({**record, "config_hash": "a" * 64}))
    signatures.sign_run(folder)
    if not manifest_holds_fields:
        manifest = json.loads((folder / signatures.RUN_MANIFEST).read_text())
        del manifest[signatures.RECORD]
        (folder / signatures.RUN_MANIFEST).write_text(json.dumps(signatures.signed(manifest)))
    return folder


FORGED = {"total_timesteps": 1400, "budgets": [600, 1400], "resume_mode": "restart_episodes"}


@pytest.mark.parametrize(
    ("change", "refused", "refused_by_older_manifest"),
    [
        ({"timesteps": 400, "wall_s": 3.5, "updated": "2026-11-23T12:00:00+0000"}, None, None),  # progress
        ({"total_timesteps": 1400}, "total_timesteps", "total_timesteps"),
        ({"budgets": [600, 1400]}, "budgets", "budgets"),
        ({"resume_mode": "restart_episodes"}, "resume_mode", None),  # an older manifest cannot tell: as before
        (FORGED, "total_timesteps, budgets, resume_mode", "total_timesteps, budgets"),
        ({"status": "completed", "final": {"mean_return": 99.0}}, "changed after", "changed after"),
    ],
    ids=["progress", "budget", "budgets", "resume-mode", "all-three", "completed"],
)
@pytest.mark.parametrize("holds_fields", [True, False], ids=["manifest-with-fields", "older-manifest"])
def test_a_running_record_may_change_its_progress_unsigned_never_what_decides_training(
    tmp_path: Path, change: dict, refused: str | None, refused_by_older_manifest: str | None, holds_fields: bool
) -> None:
    folder = killed_while_running(tmp_path, holds_fields)
    record = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**record, **change}))
    expected = refused if holds_fields else refused_by_older_manifest
    if expected is None:
        assert signatures.unsigned_record(folder) is None
        signatures.check_record(folder, "resume")
        return
    assert expected in str(signatures.unsigned_record(folder))
    with pytest.raises(signatures.NotTrusted, match="not trusted"):
        signatures.check_record(folder, "resume")


def test_a_record_is_signed_with_the_fields_that_decide_training(tmp_path: Path) -> None:
    folder = killed_while_running(tmp_path)
    manifest = json.loads((folder / signatures.RUN_MANIFEST).read_text())
    assert manifest[signatures.RECORD] == {
        "status": "running",
        "total_timesteps": 600,
        "budgets": None,
        "resume_mode": "exact",
        "config_hash": "a" * 64,
    }
    (folder / "run.json").write_text(json.dumps({"status": "interrupted", "total_timesteps": 600}))
    signatures.sign_record(folder)
    assert json.loads((folder / signatures.RUN_MANIFEST).read_text())[signatures.RECORD]["status"] == "interrupted"
    assert signatures.unsigned_record(folder) is None
