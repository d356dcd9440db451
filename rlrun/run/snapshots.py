"""Crash-safe snapshots under ``<run_dir>/snapshots/step-<N>/``.

A snapshot holds everything a run needs to continue: the model with its optimiser state
(``model.zip``), the replay buffer, the VecNormalize statistics, and ``state.pkl`` with what SB3's
``save`` leaves out (RNG states, the envs themselves, the logger's pending values, the callbacks'
state, the score of the latest evaluation). It is written under a temporary name (``.tmp-*``), every
file flushed to disk, a ``manifest.json`` with each file's sha256 written last, and only then renamed
into place; old snapshots are renamed to a ``.tmp-*`` name before they are deleted. So a process killed
at any moment leaves complete ``step-*`` folders and ``.tmp-*`` leftovers, which the next run or resume
removes and which are never listed as snapshots. A write that fails (a full disk) removes its own ``.tmp-*``
folder before it raises :class:`rlrun.record.formats.WriteFailed`, so the run's record can still say so, and a
resume removes every leftover before it writes anything (:func:`clean_run`).

Checksums are verified when a snapshot is loaded (``resume=`` reads its target once, before Hydra starts,
and passes it on), never again for the snapshots a process wrote itself. Each manifest is signed
(:mod:`rlrun.record.signatures`): what a snapshot holds is unpickled only once its manifest verifies. ``state.pkl`` of a
run written before the envs became ``rlrun.envs`` is read with the old module names mapped
(:func:`rlrun.config.upgrade.load_pickle`).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

from rlrun.config.upgrade import load_pickle
from rlrun.make.vec_envs import save_statistics
from rlrun.record import formats, reading, signatures
from rlrun.record.fields import manifest_problem
from rlrun.record.formats import remove_partial_writes, writing
from rlrun.record.signatures import sha256 as _sha256  # tests count the hashing through this name
from rlrun.run import seam

MANIFEST = "manifest.json"
STATE = "state.pkl"
BUFFER = "replay_buffer.pkl"
TMP = ".tmp-"


def snapshot_name(step: int) -> str:
    return f"step-{step:010d}"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_manifest(snapshot: Path, manifest: dict[str, Any]) -> None:
    tmp = snapshot / f".{MANIFEST}.tmp"
    tmp.unlink(missing_ok=True)
    with formats.open_for_writing(tmp) as f:
        json.dump(
            signatures.signed_snapshot(snapshot.parents[1], manifest), f, indent=2
        )  # signed: this user's rlrun wrote it (rlrun.record.signatures)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, snapshot / MANIFEST)


def remove(snapshot: Path) -> None:
    """Delete a snapshot folder: renamed to a ``.tmp-`` name first, so a kill midway leaves no damaged
    ``step-*`` folder, only a leftover that :func:`clean` removes."""
    doomed = snapshot.with_name(f"{TMP}removed-{snapshot.name}")
    shutil.rmtree(doomed, ignore_errors=True)
    os.rename(snapshot, doomed)
    shutil.rmtree(doomed)


def clean(folder: Path) -> None:
    """Remove the ``.tmp-*`` leftovers of writes and removals that were killed."""
    if folder.is_dir():
        for leftover in folder.glob(f"{TMP}*"):
            shutil.rmtree(leftover, ignore_errors=True)


def clean_run(run_dir: Path) -> None:
    """Remove rlrun's own leftovers in ``run_dir`` of writes that never finished (killed, or stopped by a full
    disk): ``snapshots/.tmp-*`` folders and temporary files such as ``.run.json.tmp``; what a resume does first,
    so it starts with the space they took."""
    remove_partial_writes(run_dir)
    clean(run_dir / "snapshots")
    for snapshot in list_snapshots(run_dir / "snapshots"):
        remove_partial_writes(snapshot)  # a manifest rewrite (drop_file) that never finished


def _write_files(model: BaseAlgorithm, tmp: Path, state: dict[str, Any], with_buffer: bool) -> None:
    """A snapshot's files, each write that fails named in its :class:`~rlrun.record.formats.WriteFailed`."""
    with writing(tmp / "model.zip"):
        model.save(tmp / "model.zip")
    if with_buffer and isinstance(model, OffPolicyAlgorithm):
        with writing(tmp / BUFFER):
            model.save_replay_buffer(tmp / BUFFER)
    if (normalizer := model.get_vec_normalize_env()) is not None:
        with writing(tmp / "vecnormalize.pkl"):
            save_statistics(normalizer, tmp / "vecnormalize.pkl", tmp / "vecnormalize.npz")  # .npz: data only
    with writing(tmp / STATE), open(tmp / STATE, "wb") as f:
        pickle.dump(state, f)


def save_snapshot(
    model: BaseAlgorithm, folder: Path, state: dict[str, Any], with_buffer: bool, score: float | None
) -> Path:
    """Write a complete snapshot of ``model`` at its current step, atomically.

    A folder of the same step already there is a damaged one (the caller never writes a step twice):
    it is removed only once the new snapshot is complete.
    """
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / snapshot_name(model.num_timesteps)
    tmp = folder / f"{TMP}{final.name}"
    shutil.rmtree(tmp, ignore_errors=True)  # a leftover of a write that was killed
    try:
        with writing(tmp):
            tmp.mkdir()
            _write_files(model, tmp, state, with_buffer)
            files = sorted(p for p in tmp.iterdir() if p.is_file())
            for path in files:
                _fsync(path)
        with writing(tmp / MANIFEST):
            _write_manifest(
                tmp, {"step": model.num_timesteps, "score": score, "files": {p.name: _sha256(p) for p in files}}
            )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # its space back (a full disk): run.json can still record why
        raise
    if final.exists():
        remove(final)
    os.rename(tmp, final)
    _fsync(folder)
    return final


def manifest(snapshot: Path) -> dict[str, Any]:
    """The snapshot's manifest, read within bounds as a regular file (a FIFO is refused, never waited on)."""
    data: dict[str, Any] = reading.load_json(snapshot / MANIFEST)
    return data


def listed(snapshot: Path, name: str) -> bool:
    """Whether the snapshot's manifest lists ``name``: a file it does not list is never loaded."""
    try:
        return name in manifest(snapshot)["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return False


def step_of(snapshot: Path) -> int:
    return int(snapshot.name.removeprefix("step-"))


def is_complete(snapshot: Path) -> bool:
    """Whether every file the manifest lists is present with its recorded hash (reads every byte). A manifest
    whose fields have the wrong type (:func:`rlrun.record.fields.manifest_problem`) or another step than its
    folder's is damage too."""
    try:
        data = manifest(snapshot)
        if manifest_problem(data) is not None or data["step"] != step_of(snapshot):
            return False
        return all(_sha256(snapshot / name) == digest for name, digest in data["files"].items())
    except (OSError, ValueError, KeyError):
        return False


def list_snapshots(folder: Path) -> list[Path]:
    """Snapshot folders, oldest first (``.tmp-*`` leftovers of killed writes and names not ``step-<digits>``
    excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and re.fullmatch("step-[0-9]+", p.name))


def newest_complete(folder: Path) -> Path | None:
    """The newest snapshot that verifies; each damaged newer one is skipped with a warning."""
    for snapshot in reversed(list_snapshots(folder)):
        if is_complete(snapshot):
            return snapshot
        warnings.warn(f"snapshot {snapshot} is damaged or incomplete; using the one before it", stacklevel=2)
    return None


def best(folder: Path) -> Path | None:
    """The complete snapshot with the highest evaluation score recorded when it was taken."""
    scored = [(manifest(s)["score"], s) for s in list_snapshots(folder) if is_complete(s)]
    scored = [(score, s) for score, s in scored if score is not None]
    return max(scored, key=lambda item: item[0])[1] if scored else None


def load_state(snapshot: Path) -> dict[str, Any]:
    """``state.pkl``, read with the module names of older rlrun versions mapped to today's."""
    state = load_pickle(snapshot / STATE)
    assert isinstance(state, dict)
    return state


def drop_file(snapshot: Path, name: str) -> None:
    """Remove one file from a complete snapshot, taking it out of the manifest first."""
    if not (snapshot / name).exists():
        return
    data = manifest(snapshot)
    data["files"].pop(name, None)
    try:
        with writing(snapshot / MANIFEST):
            _write_manifest(snapshot, data)
    except BaseException:
        remove_partial_writes(snapshot)  # the manifest as it was, and the file it lists kept
        raise
    (snapshot / name).unlink()


def prune(folder: Path, keep: int, replay_buffer: str, scores: dict[str, float | None]) -> None:
    """Apply the retention rules to the complete snapshots ``scores`` names (name -> evaluation score).

    Kept: the newest ``keep`` complete snapshots and the best-scored one; with ``latest`` only the newest
    complete one keeps its replay buffer. Folders not in ``scores`` are damaged: they never count toward
    ``keep``; those older than the newest complete one are removed (they could never be resumed from),
    newer ones are left for the run to write over when it reaches their step.
    """
    complete = sorted(name for name in scores if (folder / name).is_dir())
    if not complete:
        return
    scored = [(score, name) for name, score in scores.items() if score is not None and name in complete]
    kept = set(complete[-keep:]) | ({max(scored)[1]} if scored else set())
    for snapshot in list_snapshots(folder):
        if snapshot.name in kept:
            continue
        if snapshot.name in complete or snapshot.name < complete[-1]:
            remove(snapshot)
            scores.pop(snapshot.name, None)
    if replay_buffer == "latest":
        for name in sorted(kept)[:-1]:
            drop_file(folder / name, BUFFER)


class SnapshotCallback(BaseCallback):
    """Snapshot every ``every`` env steps at the next rollout boundary, where nothing is half-collected.

    ``state`` returns what SB3's ``save`` leaves out; ``score`` the latest evaluation's mean return;
    ``written`` is told the step of each new snapshot. ``resumed_from``: the snapshot this run was
    loaded from (verified then); older ones are verified once here, newer ones are damaged.
    """

    def __init__(
        self,
        folder: Path,
        every: int,
        keep: int,
        replay_buffer: str,
        state: Callable[[], dict[str, Any]],
        score: Callable[[], float | None],
        written: Callable[[int], None] = lambda step: None,
        resumed_from: Path | None = None,
    ) -> None:
        super().__init__()
        self.folder, self.every, self.keep, self.replay_buffer = folder, every, keep, replay_buffer
        self.state, self.score, self.written = state, score, written
        self.next_snapshot = every
        self.scores = self._known(resumed_from)
        self.torch_at_rollout_end: torch.Tensor | None = None  # for algorithms that draw before a rollout starts

    def _known(self, resumed_from: Path | None) -> dict[str, float | None]:
        """The complete snapshots already in the folder, with their scores."""
        clean(self.folder)
        if resumed_from is None:
            return {}
        return {
            s.name: manifest(s)["score"]
            for s in list_snapshots(self.folder)
            if s == resumed_from or (s.name < resumed_from.name and is_complete(s))
        }

    def _on_training_start(self) -> None:
        while self.next_snapshot <= self.num_timesteps:  # a resumed run: the next one still ahead
            self.next_snapshot += self.every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        if seam.draws_before_rollout_start(self.model):  # ARS: the generator before the next draw
            self.torch_at_rollout_end = torch.get_rng_state()

    def _on_rollout_start(self) -> None:
        # Start of a rollout: the previous update is done and nothing is half-collected.
        if self.num_timesteps < self.next_snapshot:
            return
        while self.next_snapshot <= self.num_timesteps:
            self.next_snapshot += self.every
        self.snapshot()

    def snapshot(self) -> Path:
        """Write a snapshot now (unless this step's is already written) and apply the retention rules."""
        path = self.folder / snapshot_name(self.model.num_timesteps)
        if path.name in self.scores:
            return path
        score = self.score()
        state = self.state()
        if self.torch_at_rollout_end is not None:
            state["torch_at_rollout_end"] = self.torch_at_rollout_end
        save_snapshot(self.model, self.folder, state, self.replay_buffer != "none", score)
        self.scores[path.name] = score
        prune(self.folder, self.keep, self.replay_buffer, self.scores)
        self.written(self.model.num_timesteps)
        return path
