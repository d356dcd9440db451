"""Snapshots survive every kill point, and retention keeps what snapshot.keep and snapshot.replay_buffer say."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import signal
from pathlib import Path

import pytest
import torch
from stable_baselines3 import DQN, PPO

from rlrun.config.errors import UserError
from rlrun.record import signatures
from rlrun.run import snapshots
from rlrun.run.training import resume, train
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.resume_helpers import Crash, crash_at, kill_child

DQN_RUN = ["env=gridworld", "algo=dqn"]  # off-policy (a replay buffer) and fast
PPO_RUN = ["env=gridworld", "algo=ppo"]


def parameters(run_dir: Path, cls: type = DQN) -> dict[str, torch.Tensor]:
    return cls.load(run_dir / "model.zip", device="cpu").policy.state_dict()


def same_parameters(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def leftovers(run_dir: Path) -> list[Path]:
    return list((run_dir / "snapshots").glob(".tmp-*"))


@pytest.fixture(scope="module")
def whole_dqn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, torch.Tensor]:
    """The parameters of the DQN run never stopped."""
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    train(config(*DQN_RUN), run_dir)
    return parameters(run_dir)


@pytest.mark.parametrize("point", ["model", "buffer", "manifest", "prune"])
def test_sigkill_at_each_point_of_a_snapshot_leaves_the_newest_complete_one(
    tmp_path: Path, point: str, whole_dqn: dict[str, torch.Tensor]
) -> None:
    run_dir = tmp_path / "run"
    killed = kill_child(run_dir, point, *DQN_RUN)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    listed = snapshots.list_snapshots(run_dir / "snapshots")
    assert listed and all(snapshots.is_complete(s) for s in listed)  # the killed write is never listed
    assert leftovers(run_dir)  # what the killed write or removal left, under a .tmp- name
    assert (listed[-1] / snapshots.BUFFER).exists()  # the newest complete one keeps its buffer
    assert record(run_dir)["timesteps"] == 512  # run.json was current: the evaluation at 512, before snapshot 2

    resume(run_dir, progress_bar="false")
    assert not leftovers(run_dir)  # cleaned up by the resume
    assert record(run_dir)["status"] == "completed"
    assert same_parameters(parameters(run_dir), whole_dqn)  # resumed exactly, buffer included


def test_sigkill_while_a_damaged_snapshot_of_the_same_step_is_replaced(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cfg = config(*PPO_RUN)
    cfg.snapshot.keep = 5
    train(cfg, run_dir)
    whole = parameters(run_dir, PPO)
    names = [s.name for s in snapshots.list_snapshots(run_dir / "snapshots")]
    assert [snapshots.step_of(Path(n)) for n in names] == [256, 512, 768, 1024]  # 1024: the final state
    with open(run_dir / "snapshots" / names[-1] / "model.zip", "r+b") as f:
        f.truncate(100)  # the newest is damaged: a resume continues from 768 and writes 1024 again
    data = record(run_dir)
    data.update(status="interrupted", final=None)
    (run_dir / "run.json").write_text(json.dumps(data))
    signatures.sign_record(run_dir)  # as rlrun signs a status it writes

    killed = kill_child(run_dir, "replace", "resume")  # killed once the damaged 768 is moved aside
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    listed = snapshots.list_snapshots(run_dir / "snapshots")
    assert [s.name for s in listed] == names[:3] and all(snapshots.is_complete(s) for s in listed)
    assert leftovers(run_dir)

    resume(run_dir, progress_bar="false")
    assert not leftovers(run_dir) and record(run_dir)["status"] == "completed"
    assert same_parameters(parameters(run_dir, PPO), whole)


@pytest.fixture(scope="module")
def three_snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshots (256, 512, 768), each with its replay buffer, of a DQN run that kept them all."""
    run_dir = tmp_path_factory.mktemp("kept") / "run"
    cfg = config(*DQN_RUN)
    cfg.snapshot.keep, cfg.snapshot.replay_buffer = 10, "all"
    train(cfg, run_dir)
    snapshots.remove(run_dir / "snapshots" / snapshots.snapshot_name(cfg.total_timesteps))  # the final one
    return run_dir / "snapshots"


def test_pruning_never_strips_the_newest_complete_snapshot(tmp_path: Path, three_snapshots: Path) -> None:
    folder = Path(shutil.copytree(three_snapshots, tmp_path / "snapshots"))
    names = [s.name for s in snapshots.list_snapshots(folder)]
    (folder / names[2] / snapshots.STATE).write_bytes(b"garbage")  # the newest folder is damaged
    snapshots.prune(folder, 1, "latest", {names[0]: 1.0, names[1]: 0.0})  # the complete ones, with scores

    assert [s.name for s in snapshots.list_snapshots(folder)] == names  # best, newest complete, damaged newer
    assert (folder / names[1] / snapshots.BUFFER).exists()  # the newest complete one keeps its buffer
    assert not (folder / names[0] / snapshots.BUFFER).exists()
    assert snapshots.is_complete(folder / names[0]) and snapshots.is_complete(folder / names[1])


def test_pruning_does_not_count_damaged_snapshots_toward_keep(tmp_path: Path, three_snapshots: Path) -> None:
    folder = Path(shutil.copytree(three_snapshots, tmp_path / "snapshots"))
    names = [s.name for s in snapshots.list_snapshots(folder)]
    (folder / names[1] / snapshots.STATE).write_bytes(b"garbage")
    snapshots.prune(folder, 2, "latest", {names[0]: 0.0, names[2]: 0.0})

    assert [s.name for s in snapshots.list_snapshots(folder)] == [names[0], names[2]]  # the damaged one removed
    assert (folder / names[2] / snapshots.BUFFER).exists() and not (folder / names[0] / snapshots.BUFFER).exists()


def eval_scores(run_dir: Path) -> dict[int, float]:
    """Step -> mean return of each periodic evaluation, read from eval.csv."""
    with open(run_dir / "eval.csv") as f:
        return {int(row["timesteps"]): float(row["mean_return"]) for row in csv.DictReader(f)}


def latest_score(scores: dict[int, float], step: int) -> float | None:
    """The score a snapshot at ``step`` carries: the latest evaluation at or before it."""
    done = [s for s in scores if s <= step]
    return scores[max(done)] if done else None


def test_the_best_scored_snapshot_is_kept_with_the_newest(tmp_path: Path) -> None:
    cfg = config(*PPO_RUN, "seed=1")  # a seed whose best evaluation is not its last
    cfg.snapshot.every = cfg.eval.every = 64
    cfg.snapshot.keep = 1
    train(cfg, tmp_path)
    scores = eval_scores(tmp_path)
    taken = list(scores)  # every evaluation's step, the last one's too: the final snapshot
    best = max(taken, key=lambda step: (scores[step], step))  # the highest score; the newest among equals
    assert best != taken[-1]  # else this run could not tell the rule from "keep the newest only"

    kept = snapshots.list_snapshots(tmp_path / "snapshots")
    assert [snapshots.step_of(s) for s in kept] == [best, taken[-1]]
    assert [snapshots.manifest(s)["score"] for s in kept] == [scores[best], scores[taken[-1]]]


def test_snapshots_after_a_resume_carry_the_score_of_the_latest_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(*PPO_RUN)
    cfg.eval.every, cfg.snapshot.keep = 400, 10  # evaluations at 400 and 800; snapshots at 256, 512, 768
    with monkeypatch.context() as patch:
        crash_at(patch, 550)
        with pytest.raises(Crash):
            train(cfg, tmp_path)
    resume(tmp_path, progress_bar="false")  # from 512; the snapshot at 768 comes before the next evaluation
    scores = eval_scores(tmp_path)
    kept = snapshots.list_snapshots(tmp_path / "snapshots")
    assert [snapshots.manifest(s)["score"] for s in kept] == [latest_score(scores, snapshots.step_of(s)) for s in kept]
    assert snapshots.manifest(kept[-1])["score"] == scores[400]


def test_a_run_hashes_only_the_files_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[Path] = []
    original = snapshots._sha256

    def sha256(path: Path) -> str:
        hashed.append(path)
        return original(path)

    monkeypatch.setattr(snapshots, "_sha256", sha256)
    cfg = config(*DQN_RUN)
    cfg.snapshot.every = 128
    train(cfg, tmp_path)
    assert hashed and all(path.parent.name.startswith(".tmp-step-") for path in hashed)  # as written, never again
    assert len(hashed) == len(set(hashed))


def test_best_is_the_snapshot_with_the_highest_score(finished_run: Path) -> None:
    folder = finished_run / "snapshots"
    scores = {s: snapshots.manifest(s)["score"] for s in snapshots.list_snapshots(folder)}
    scored = {s: score for s, score in scores.items() if score is not None}  # None: taken before any evaluation
    assert scored and snapshots.best(folder) == max(scored, key=lambda s: scored[s])


def fake_snapshot(folder: Path, step: int, manifest: object) -> Path:
    """A snapshot folder holding one file and the given ``manifest.json`` (no run behind it)."""
    snapshot = folder / snapshots.snapshot_name(step)
    snapshot.mkdir(parents=True)
    (snapshot / "model.zip").write_bytes(b"model")
    (snapshot / snapshots.MANIFEST).write_text(json.dumps(manifest))
    return snapshot


@pytest.mark.parametrize(
    "manifest",
    [
        [1, 2],
        {"step": 2, "score": None, "files": ["model.zip"]},
        {"step": 2, "score": None, "files": {"model.zip": 5}},
        {"step": 2, "score": None, "files": {"../model.zip": hashlib.sha256(b"model").hexdigest()}},
        {"step": "2", "score": None, "files": {"model.zip": hashlib.sha256(b"model").hexdigest()}},
        {"step": 3, "score": None, "files": {"model.zip": hashlib.sha256(b"model").hexdigest()}},
        {"step": 2, "score": "high", "files": {"model.zip": hashlib.sha256(b"model").hexdigest()}},
    ],
    ids=["a-list", "files-a-list", "digest-not-text", "name-not-plain", "step-text", "step-not-its-folder's", "score"],
)
def test_a_manifest_of_the_wrong_shape_is_a_damaged_snapshot(tmp_path: Path, manifest: object) -> None:
    from rlrun.playback.loading import _find_model

    digest = hashlib.sha256(b"model").hexdigest()
    good = fake_snapshot(tmp_path / "snapshots", 1, {"step": 1, "score": None, "files": {"model.zip": digest}})
    damaged = fake_snapshot(tmp_path / "snapshots", 2, manifest)
    (tmp_path / "snapshots" / "step-latest").mkdir()  # not a step: never listed (step_of would fail on it)
    assert snapshots.list_snapshots(tmp_path / "snapshots") == [good, damaged]
    assert not snapshots.is_complete(damaged)
    with pytest.warns(UserWarning, match=f"snapshot {damaged} is damaged"):
        assert snapshots.newest_complete(tmp_path / "snapshots") == good
    # rlrun-eval --snapshot N lists the complete steps (exit 2), never a TypeError
    with pytest.raises(UserError, match=r"no complete snapshot at step 7") as refused:
        _find_model(tmp_path, "7", data_only=True)
    assert refused.value.status == 2 and refused.value.fix == "choose one of: [1]"
