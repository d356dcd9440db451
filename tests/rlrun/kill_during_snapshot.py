"""Test helper run as a subprocess: train (or resume) and SIGKILL this process at one kill point.

Usage (from the repository root):
  python -m tests.rlrun.kill_during_snapshot <run_dir> <point> [steps=<N>] <override>...
  python -m tests.rlrun.kill_during_snapshot <run_dir> <point> resume

Kill points (counted in snapshots written by this process):
  step-<N>  once training has reached step N (a crash mid-run)
  model     after ``model.zip`` of the second snapshot
  buffer    halfway through writing the replay buffer of the second snapshot
  manifest  halfway through writing the manifest of the second snapshot
  prune     during pruning, after one file of the removed snapshot is deleted
  replace   after a damaged folder of the step being written is moved aside, before the new one is renamed
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

from rlrun.run import snapshots
from tests.rlrun.helpers import compose_config, shrink

STEPS = 1024


def config(*overrides: str, steps: int = STEPS) -> DictConfig:
    """The config of the kill and resume tests: snapshots every quarter, evaluations every eighth."""
    cfg = shrink(compose_config(*overrides), steps)
    cfg.snapshot.every = steps // 4
    cfg.eval.every = steps // 8
    cfg.eval.n_envs = 1
    return cfg


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _second_snapshot(path: Any) -> bool:
    """Whether ``path`` lies in the second snapshot this process writes."""
    name = Path(path).parent.name if Path(path).suffix else Path(path).name
    if name.startswith(".tmp-step-") and name not in _seen:
        _seen.append(name)
    return len(_seen) == 2 and name == _seen[1]


_seen: list[str] = []


def arm(point: str) -> None:
    """Patch the step of the snapshot code that the kill point names so that it kills this process."""
    if point.startswith("step-"):
        step = int(point.removeprefix("step-"))
        original_on_step = snapshots.SnapshotCallback._on_step

        def on_step(self: snapshots.SnapshotCallback) -> bool:
            if self.num_timesteps >= step:
                die()
            return original_on_step(self)

        snapshots.SnapshotCallback._on_step = on_step  # type: ignore[method-assign]
    elif point == "model":
        original_save = snapshots.BaseAlgorithm.save

        def save(self: Any, path: Any, *args: Any, **kwargs: Any) -> None:
            original_save(self, path, *args, **kwargs)
            if _second_snapshot(path):
                die()

        snapshots.BaseAlgorithm.save = save  # type: ignore[method-assign]
    elif point == "buffer":
        original_buffer = OffPolicyAlgorithm.save_replay_buffer

        def save_replay_buffer(self: Any, path: Any) -> None:
            original_buffer(self, path)
            if _second_snapshot(path):
                os.truncate(path, os.path.getsize(path) // 2)  # as if killed halfway through the write
                die()

        OffPolicyAlgorithm.save_replay_buffer = save_replay_buffer  # type: ignore[method-assign]
    elif point == "manifest":
        original_manifest = snapshots._write_manifest

        def write_manifest(snapshot: Path, manifest: dict[str, Any]) -> None:
            _second_snapshot(snapshot)
            if len(_seen) == 2 and snapshot.name == _seen[1]:
                text = snapshots.json.dumps(manifest)
                (snapshot / f".{snapshots.MANIFEST}.tmp").write_text(text[: len(text) // 2])
                die()
            original_manifest(snapshot, manifest)

        snapshots._write_manifest = write_manifest
    elif point == "prune":
        original_rmtree = shutil.rmtree

        def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
            folder = Path(path)
            if folder.name.startswith(".tmp-removed-step-") and folder.is_dir():
                next(p for p in folder.iterdir() if p.name != snapshots.MANIFEST).unlink()
                die()
            original_rmtree(path, *args, **kwargs)

        snapshots.shutil.rmtree = rmtree  # type: ignore[attr-defined]
    elif point == "replace":
        original_rename = os.rename

        def rename(src: Any, dst: Any) -> None:
            original_rename(src, dst)
            if Path(dst).name.startswith(".tmp-removed-step-"):
                die()

        snapshots.os.rename = rename  # type: ignore[attr-defined]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


def main() -> None:
    from rlrun.run.training import resume, train

    run_dir, point, overrides = sys.argv[1], sys.argv[2], sys.argv[3:]
    steps = STEPS
    if overrides and overrides[0].startswith("steps="):  # the budget of config(), if not STEPS
        steps = int(overrides.pop(0).removeprefix("steps="))
    arm(point)
    if overrides == ["resume"]:
        resume(run_dir, progress_bar="false")
    else:
        cfg = config(*overrides, steps=steps)
        if point == "prune":
            cfg.snapshot.keep = 1  # the second snapshot prunes the first
        train(cfg, run_dir)


if __name__ == "__main__":
    main()
