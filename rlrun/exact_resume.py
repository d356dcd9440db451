"""Exact resume: what SB3's ``save`` leaves out, captured at a snapshot and put back on resume.

Captured: the RNG states (Python, numpy, torch, the model's action space), the in-process envs
themselves (their wrappers, ``np_random``, episode counters and the vec env's buffers),
VecNormalize's running returns, the logger's values recorded but not yet written, and the
evaluation callback's state. Subprocess envs cannot be captured: such a run resumes with freshly
reset envs, correctly but not bit-identically.
"""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from rlrun.errors import UserError
from rlrun.evaluation import EVAL_CSV_HEADER, PeriodicEvaluation
from rlrun.snapshots import list_snapshots, newest_complete


def _vec_state(venv: VecEnv) -> dict[str, Any] | None:
    base = venv.unwrapped
    return dict(base.__dict__) if isinstance(base, DummyVecEnv) else None


def capture(model: BaseAlgorithm, train_env: VecEnv, eval_env: VecEnv, evaluator: PeriodicEvaluation) -> dict[str, Any]:
    """Everything beyond ``model.save`` that the continuation depends on."""
    normalizer = model.get_vec_normalize_env()
    logger = model.logger
    return {
        "rng": {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
            "action_space": model.action_space.np_random.bit_generator.state,
        },
        "train_env": _vec_state(train_env),
        "eval_env": _vec_state(eval_env),
        "normalizer_returns": None if normalizer is None else normalizer.returns.copy(),
        "logger": {
            "name_to_value": dict(logger.name_to_value),
            "name_to_count": dict(logger.name_to_count),
            "name_to_excluded": dict(logger.name_to_excluded),
        },
        "evaluator": {"best_mean_return": evaluator.best_mean_return, "wall_s": evaluator.wall()},
    }


def restore(
    state: dict[str, Any], model: BaseAlgorithm, train_env: VecEnv, eval_env: VecEnv, evaluator: PeriodicEvaluation
) -> bool:
    """Put captured state back after the model was loaded; returns whether the resume is exact."""
    exact = True
    for venv, saved in ((train_env, state["train_env"]), (eval_env, state["eval_env"])):
        base = venv.unwrapped
        if saved is not None and isinstance(base, DummyVecEnv):
            base.__dict__.update(saved)
        else:
            exact = False  # subprocess envs: reset and continue
    normalizer = model.get_vec_normalize_env()
    if normalizer is not None and state["normalizer_returns"] is not None:
        normalizer.returns = state["normalizer_returns"]
    for name, values in state["logger"].items():
        getattr(model.logger, name).update(values)
    evaluator.best_mean_return = state["evaluator"]["best_mean_return"]
    evaluator.wall_offset = state["evaluator"]["wall_s"]
    rng = state["rng"]
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    model.action_space.np_random.bit_generator.state = rng["action_space"]
    if not exact:
        model._last_obs = None  # type: ignore[assignment]  # learn() resets the fresh envs
    return exact


def rewind_eval_csv(path: Path, step: int) -> None:
    """Keep exactly the rows up to ``step`` (atomically), so nothing after the snapshot is duplicated."""
    if not path.exists():
        return
    with open(path) as f:
        rows = [row for row in csv.reader(f)][1:]
    kept = [row for row in rows if row and int(row[0]) <= step]
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as f:
        f.write(EVAL_CSV_HEADER)
        csv.writer(f, lineterminator="\n").writerows(kept)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_target(run_dir: Path, record: dict[str, Any] | None) -> Path | None:
    """Validate ``resume=<run_dir>``; the snapshot to continue from (None: the run is completed)."""
    import platform

    if record is None:
        raise UserError(
            f"resume={run_dir}: not a run folder (no run.json)",
            "give the folder of a run, e.g. resume=outputs/runs/gridworld-ppo/<stamp>",
        )
    if record.get("status") == "completed":
        return None
    pid, host = record.get("pid"), record.get("host")
    alive = record.get("status") == "running" and host == platform.node() and pid and _pid_alive(pid)
    if alive and pid != os.getpid():
        raise UserError(f"resume={run_dir}: the run is still going (pid {pid})", f"stop it first: kill {pid}")
    snapshot = newest_complete(run_dir / "snapshots")
    if snapshot is None:
        found = len(list_snapshots(run_dir / "snapshots"))
        what = f"all {found} snapshots are damaged" if found else "it has no snapshot yet"
        raise UserError(
            f"resume={run_dir}: cannot continue, {what}",
            "start the run again (snapshots are taken every snapshot.every steps)",
        )
    return snapshot


def load_target(run_dir: Path) -> tuple[dict[str, Any], Path | None]:
    """Read ``run.json`` of ``resume=<run_dir>`` and check it: the record and the snapshot to continue from
    (None: the run is completed). The one place both the command line and :func:`rlrun.train.resume` use."""
    record_path = run_dir / "run.json"
    try:
        record = json.loads(record_path.read_text()) if record_path.is_file() else None
    except ValueError as error:
        raise UserError(
            f"resume={run_dir}: its run.json cannot be read ({error})", "restore run.json or start a new run"
        ) from None
    snapshot = check_target(run_dir, record)
    assert record is not None  # check_target refuses a folder without a record
    return record, snapshot
