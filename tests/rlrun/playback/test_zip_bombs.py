"""A zip bomb in a received folder (its ``model.zip``, a snapshot's, its ``vecnormalize.npz``) is refused before a
byte of it is unpacked (rlrun/playback/received.check_archive, issue 48): exit 2, never the memory filled."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from omegaconf import open_dict

from rlrun.cli import eval as eval_cli
from rlrun.config.errors import UserError
from rlrun.playback import received
from rlrun.record import signatures
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink

BOMB_BYTES = 16 * 2**20  # zeros: they pack about 1,000 to 1


def bomb(path: Path, like: Path | None = None) -> None:
    """A zip with ``like``'s small entries, and one entry of zeros packing a thousandfold."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if like is not None:
            with zipfile.ZipFile(like) as original:
                for entry in original.infolist():
                    if entry.filename != "policy.pth":
                        archive.writestr(entry, original.read(entry))
        archive.writestr("policy.pth", bytes(BOMB_BYTES))


@pytest.fixture(scope="module")
def received_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished run of this user's with a snapshot, copied as a received folder (no run manifest)."""
    tmp = tmp_path_factory.mktemp("received")
    cfg = shrink(compose_config("env=gridworld", "algo=ppo"), 64)
    with open_dict(cfg):
        cfg.eval.n_envs, cfg.snapshot.every = 1, 64
    train(cfg, tmp / "own")
    shutil.copytree(tmp / "own", tmp / "received")
    (tmp / "received" / signatures.RUN_MANIFEST).unlink()
    return tmp / "received"


def evaluated(run_dir: Path, *args: str) -> int:
    with pytest.raises(SystemExit) as ended:
        eval_cli.main([str(run_dir), "--episodes", "1", *args])
    return int(ended.value.code or 0)


def test_a_received_model_zip_bomb_is_refused_before_it_is_unpacked(
    received_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = shutil.copytree(received_run, tmp_path / "run")
    bomb(run_dir / "model.zip", like=received_run / "model.zip")
    assert evaluated(run_dir) == 2
    err = capsys.readouterr().err
    assert f"{run_dir / 'model.zip'} would unpack to" in err and "a zip bomb" in err and "fix:" in err
    assert "Traceback" not in err


def test_a_received_snapshots_zip_bomb_is_refused_too(
    received_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = shutil.copytree(received_run, tmp_path / "run")
    (run_dir / "model.zip").unlink()  # the newest snapshot is evaluated instead
    snapshot = sorted((run_dir / "snapshots").glob("step-*"))[-1]
    bomb(snapshot / "model.zip", like=received_run / "model.zip")
    manifest = json.loads((snapshot / "manifest.json").read_text())  # a received folder's own say: unsigned
    manifest["files"]["model.zip"] = signatures.sha256(snapshot / "model.zip")
    (snapshot / "manifest.json").write_text(json.dumps(manifest))
    assert evaluated(run_dir, "--snapshot", "latest") == 2
    assert f"{snapshot / 'model.zip'} would unpack to" in capsys.readouterr().err


def test_an_archive_is_bounded_by_the_sizes_it_declares(tmp_path: Path) -> None:
    bomb(tmp_path / "bomb.npz")
    with pytest.raises(UserError, match="policy.pth: 16,777,216 from"):
        received.check_archive(tmp_path / "bomb.npz")
    with zipfile.ZipFile(tmp_path / "weights.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("policy.pth", bytes(range(256)) * 4096)  # 1 MiB that packs a little, as weights do
        archive.writestr("data", "{}" + " " * 500_000)  # small files may pack as tightly as they like
    received.check_archive(tmp_path / "weights.zip")
    (tmp_path / "not.zip").write_text("not a zip")
    with pytest.raises(UserError, match="is not a zip archive"):
        received.check_archive(tmp_path / "not.zip")
