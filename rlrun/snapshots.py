"""Periodic snapshots under ``<run_dir>/snapshots/step-<N>/``, written atomically.

A snapshot folder is written under a temporary name, every file flushed to disk, a ``manifest.json``
with each file's sha256 written last, and only then renamed into place. A folder without a valid
manifest is therefore never mistaken for a complete snapshot.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

MANIFEST = "manifest.json"


def snapshot_name(step: int) -> str:
    return f"step-{step:010d}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_snapshot(model: BaseAlgorithm, folder: Path, with_buffer: bool) -> Path:
    """Write model (with optimiser state), replay buffer and VecNormalize statistics atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / snapshot_name(model.num_timesteps)
    tmp = folder / f".tmp-{final.name}"
    shutil.rmtree(tmp, ignore_errors=True)  # a leftover of a write that was killed
    tmp.mkdir()
    model.save(tmp / "model.zip")
    if with_buffer and isinstance(model, OffPolicyAlgorithm):
        model.save_replay_buffer(tmp / "replay_buffer.pkl")
    vec_normalize = model.get_vec_normalize_env()
    if vec_normalize is not None:
        vec_normalize.save(str(tmp / "vecnormalize.pkl"))
    files = sorted(p for p in tmp.iterdir() if p.is_file())
    for path in files:
        with open(path, "rb") as f:
            os.fsync(f.fileno())
    manifest = {"step": model.num_timesteps, "files": {p.name: _sha256(p) for p in files}}
    with open(tmp / MANIFEST, "w") as f:
        json.dump(manifest, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    if final.exists():  # the same step written again (a resumed run): the new one replaces it
        shutil.rmtree(final)
    os.rename(tmp, final)
    _fsync_dir(folder)
    return final


def is_complete(snapshot: Path) -> bool:
    """Whether every file the manifest lists is present with its recorded hash."""
    try:
        manifest = json.loads((snapshot / MANIFEST).read_text())
        return all(_sha256(snapshot / name) == digest for name, digest in manifest["files"].items())
    except (OSError, ValueError, KeyError):
        return False


def list_snapshots(folder: Path) -> list[Path]:
    """Snapshot folders, oldest first (temporary folders excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("step-"))


class SnapshotCallback(BaseCallback):
    """Snapshot every ``every`` env steps at the next rollout boundary; keep the newest ``keep``.

    ``replay_buffer``: ``latest`` keeps the buffer only in the newest snapshot (the previous one loses
    it only after the new one is complete), ``all`` in every snapshot, ``none`` never.
    """

    def __init__(self, folder: Path, every: int, keep: int, replay_buffer: str) -> None:
        super().__init__()
        self.folder = folder
        self.every = every
        self.keep = keep
        self.replay_buffer = replay_buffer
        self.next_snapshot = every

    def _on_training_start(self) -> None:
        while self.next_snapshot <= self.num_timesteps:
            self.next_snapshot += self.every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        # Start of a rollout: the previous update is done and nothing is half-collected.
        if self.num_timesteps < self.next_snapshot:
            return
        while self.next_snapshot <= self.num_timesteps:
            self.next_snapshot += self.every
        self.snapshot()

    def snapshot(self) -> Path:
        """Write a snapshot now and apply the retention rules."""
        path = save_snapshot(self.model, self.folder, with_buffer=self.replay_buffer != "none")
        self.prune()
        return path

    def prune(self) -> None:
        snapshots = list_snapshots(self.folder)
        for old in snapshots[: -self.keep]:
            shutil.rmtree(old)
        if self.replay_buffer == "latest":
            for old in snapshots[-self.keep : -1]:
                drop_file(old, "replay_buffer.pkl")


def drop_file(snapshot: Path, name: str) -> None:
    """Remove one file from a complete snapshot, taking it out of the manifest first."""
    path = snapshot / name
    if not path.exists():
        return
    manifest = json.loads((snapshot / MANIFEST).read_text())
    manifest["files"].pop(name, None)
    tmp = snapshot / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, snapshot / MANIFEST)
    path.unlink()
