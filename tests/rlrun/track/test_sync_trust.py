"""``rlrun-track sync`` sends only what belongs to a trusted folder, only where the user says: a folder not trusted
is refused, artifact paths outside the folder or through a link are never sent, and a URI the folder names is
never used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlrun.config.errors import UserError
from rlrun.record import signatures
from rlrun.run.training import train
from rlrun.track.sync import sync_run
from tests import forked_commands
from tests.rlrun.helpers import TINY_RUN, compose_config

mlflow = pytest.importorskip("mlflow")
SECRET = "the signing key\n"


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished run of this user's, trained without a logger (each test copies it)."""
    run_dir = tmp_path_factory.mktemp("own") / "run"
    train(compose_config(*TINY_RUN), run_dir)
    return run_dir


def sent(uri: str) -> list[str]:
    """The artifact paths of every run in the store at ``uri``."""
    client = mlflow.MlflowClient(tracking_uri=uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    return [item.path for run in runs for item in client.list_artifacts(run.info.run_id)]


def unsent(run_dir: Path, *paths: str) -> None:
    """A tracking-unsent.jsonl as anyone can write it: a run to start, then artifacts by path."""
    ops = [{"op": "start", "name": "x", "tags": {}}, {"op": "artifacts", "paths": list(paths)}]
    (run_dir / "tracking-unsent.jsonl").write_text(
        "".join(json.dumps(op) + "\n" for op in ops + [{"op": "end", "status": "completed"}])
    )


def test_a_folder_not_trusted_is_refused_and_nothing_is_sent(own: Path, tmp_path: Path) -> None:
    run_dir, store = tmp_path / "received", f"sqlite:///{tmp_path / 'mlflow.db'}"
    shutil.copytree(own, run_dir)
    (run_dir / signatures.RUN_MANIFEST).unlink()
    done = forked_commands.run(["-m", "rlrun.cli.track", "sync", "--tracking-uri", store, str(run_dir)], timeout=300)
    assert done.returncode == 2 and "not trusted" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "mlflow.db").exists()


def test_only_regular_files_inside_the_folder_are_sent(own: Path, tmp_path: Path) -> None:
    run_dir, store = tmp_path / "run", f"sqlite:///{tmp_path / 'mlflow.db'}"
    shutil.copytree(own, run_dir)
    (tmp_path / "trust.key").write_text(SECRET)
    unsent(run_dir, str(tmp_path / "trust.key"), "../trust.key", "config.yaml")
    sync_run(run_dir, tracking_uri=store)
    assert sent(store) == ["config.yaml"]
    (run_dir / "key.txt").symlink_to(tmp_path / "trust.key")  # a link in the folder: refused as a whole
    unsent(run_dir, "key.txt")
    with pytest.raises(UserError, match="symbolic links"):
        sync_run(run_dir, tracking_uri=store)
    assert sent(store) == ["config.yaml"]


def test_a_hard_linked_lock_is_refused_and_the_file_it_names_never_written(own: Path, tmp_path: Path) -> None:
    run_dir, store = tmp_path / "run", f"sqlite:///{tmp_path / 'mlflow.db'}"
    shutil.copytree(own, run_dir)
    (tmp_path / "mine.txt").write_text(SECRET)
    (run_dir / ".lock").hardlink_to(tmp_path / "mine.txt")  # the same file system: the file itself
    with pytest.raises(UserError, match=r"\.lock \(a hard link"):
        sync_run(run_dir, tracking_uri=store)
    assert (tmp_path / "mine.txt").read_text() == SECRET and not (tmp_path / "mlflow.db").exists()


def test_the_server_is_the_users_never_the_folders(own: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir, named, chosen = tmp_path / "run", tmp_path / "named.db", tmp_path / "chosen.db"
    shutil.copytree(own, run_dir)
    record = json.loads((run_dir / "run.json").read_text())
    record["tracking"] = {"mlflow": {"run_id": None, "tracking_uri": f"sqlite:///{named}"}, "unsent": 3}
    (run_dir / "run.json").write_text(json.dumps(record))
    signatures.trust_folder(run_dir)  # even a folder the user trusts names no server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{chosen}")
    sync_run(run_dir)
    assert not named.exists() and "config.yaml" in sent(f"sqlite:///{chosen}")
