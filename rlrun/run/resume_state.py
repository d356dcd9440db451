"""Exact resume: what SB3's ``save`` leaves out, captured at a snapshot and put back on resume.

Captured: the RNG states (Python, numpy, torch, the model's action space), gSDE's sampled
exploration noise, the envs themselves (in-process: the vec env with its buffers; subprocess: each
worker's env, pickled in the worker and sent back), the NaN checker's step counter, VecNormalize's
running returns, the logger's values recorded but not yet written, and the evaluation callback's state
(best and latest score, training seconds), RecurrentPPO's LSTM states (which its own save leaves out),
and for ARS torch's generator as it was at the end of the last rollout (ARS draws the next rollout's noise
before the snapshot is taken: :func:`rlrun.run.seam.draws_before_rollout_start`). Action noise (its
state included, e.g. Ornstein-Uhlenbeck's) is saved by ``model.save`` itself. What is private to SB3 or
Gymnasium is reached through :mod:`rlrun.run.seam`.

The envs are captured only in the run's ``exact`` resume mode (:mod:`rlrun.checks.resume_mode`, decided when the
run starts and recorded in run.json). In ``restart_episodes`` everything else is captured as above, and a resume
rebuilds the envs from the config, reseeded from the run's seed and the snapshot's step, so the episodes in flight
start over.
"""

from __future__ import annotations

import csv
import logging
import os
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor, unwrap_vec_wrapper

from rlrun.checks import resume_mode
from rlrun.checks.resume_mode import ResumeMode
from rlrun.config.errors import UserError
from rlrun.envs.batched import BatchedVecEnv
from rlrun.make import jax_models
from rlrun.make.nan import CheckNan
from rlrun.record import formats, reading, signatures
from rlrun.record.fields import EVAL_FIELDS, REQUIRED, eval_csv_problem, eval_csv_rows, read_config, record_problem
from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.run import seam
from rlrun.run.evaluation import OwedEvaluation, PeriodicEvaluation
from rlrun.run.snapshots import list_snapshots, newest_complete

log = logging.getLogger("rlrun")


def resumed_mode(cfg: DictConfig, record: dict[str, Any]) -> ResumeMode:
    """The mode a resumed run recorded (``exact`` for a run written before modes existed), logged; a new round
    trip that finds another mode is stated, and the recorded one kept (its snapshots were written for it)."""
    mode = resume_mode.recorded(record)
    record.setdefault("resume_mode", mode.mode)
    log.info(resume_mode.resume_mode_line(mode))
    found = resume_mode.decide(cfg)
    if found.mode != mode.mode:
        log.warning(
            "a round trip now finds resume mode %s (%s); this run keeps %s", found.mode, found.reason, mode.mode
        )
    return mode


def _vec_state(venv: VecEnv) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The envs themselves: a DummyVecEnv's attributes, or each subprocess worker's outermost env's."""
    base = venv.unwrapped
    if isinstance(base, DummyVecEnv):
        return seam.whole_state(base)
    if isinstance(base, BatchedVecEnv):  # env.vectorization=native: all copies' arrays and VecMonitor's counts
        monitor = unwrap_vec_wrapper(venv, VecMonitor)
        counts = None if monitor is None else seam.monitor_counts(monitor)
        return {"batched": seam.whole_state(base), "monitor": counts}
    if isinstance(base, SubprocVecEnv):  # pickled in the worker, sent back through its pipe
        return seam.worker_states(base)
    return None


def _put_vec_state(venv: VecEnv, saved: dict[str, Any] | list[dict[str, Any]] | None) -> bool:
    base = venv.unwrapped
    if isinstance(base, BatchedVecEnv) and isinstance(saved, dict) and "batched" in saved:
        seam.put_whole_state(base, saved["batched"])
        if (monitor := unwrap_vec_wrapper(venv, VecMonitor)) is not None and saved["monitor"] is not None:
            seam.put_monitor_counts(monitor, saved["monitor"])
    elif isinstance(base, DummyVecEnv) and isinstance(saved, dict):
        seam.put_whole_state(base, saved)
    elif isinstance(base, SubprocVecEnv) and isinstance(saved, list) and len(saved) == base.num_envs:
        seam.put_worker_states(base, saved)
    else:
        return False
    return True


def capture(
    model: BaseAlgorithm, train_env: VecEnv, eval_env: VecEnv, evaluator: PeriodicEvaluation, exact: bool = True
) -> dict[str, Any]:
    """Everything beyond ``model.save`` that the continuation depends on; the envs themselves only if ``exact``."""
    normalizer = model.get_vec_normalize_env()
    checker = unwrap_vec_wrapper(train_env, CheckNan)
    return {
        "rng": {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
            "action_space": model.action_space.np_random.bit_generator.state,
        },
        "jax_key": jax_models.key_state(model),  # SBX's random key, which load() draws anew; None on torch
        "sde": seam.sde_noise(model),
        "lstm": seam.recurrent_states(model),  # RecurrentPPO's; None for the others
        **_env_states(train_env, eval_env, evaluator, exact),
        "check_nan_steps": None if checker is None else checker.steps,
        "normalizer_returns": None if normalizer is None else seam.running_returns(normalizer),
        "logger": seam.logger_state(model.logger),
        "evaluator": {
            "best_mean_return": evaluator.best_mean_return,
            "last_mean_return": evaluator.last_mean_return,  # the score of the snapshots to come
            "wall_s": evaluator.wall(),
            "eval_s": evaluator.eval_s,
            # the evaluations a stop signal kept from being reported: done first when the run resumes
            "owed": [owed.saved() for owed in evaluator.owed],
        },
    }


def _env_states(train_env: VecEnv, eval_env: VecEnv, evaluator: PeriodicEvaluation, exact: bool) -> dict[str, Any]:
    """The envs themselves, in ``exact`` mode (the eval env as the first owed evaluation found it, if one is owed:
    the resumed run does it again from there); none when they do not pickle now (an env that took on something
    unpicklable after the round trip that chose ``exact``): that snapshot restarts episodes, the run goes on.
    (Subprocess workers pickle their env in the worker, where a failure ends the worker: the round trip is their
    only guard.)"""
    if exact and evaluator.owed and evaluator.saved_eval_env() is None:
        log.warning(
            "the eval env could not be copied when the evaluation a stop signal cut short began: the resumed run "
            "does that evaluation again on other episodes"
        )
    eval_state = evaluator.saved_eval_env() or _vec_state(eval_env)
    envs = {"train_env": _vec_state(train_env), "eval_env": eval_state} if exact else {}
    try:
        pickle.dumps(envs)
    except Exception as error:
        log.warning(
            "the envs do not pickle (%s: %s): this snapshot holds no envs, so a resume from it restarts the "
            "episodes in flight",
            type(error).__name__,
            error,
        )
        envs = {}
    mode = resume_mode.EXACT if envs else resume_mode.RESTART_EPISODES
    return {"resume_mode": mode, "train_env": envs.get("train_env"), "eval_env": envs.get("eval_env")}


def restore(
    state: dict[str, Any], model: BaseAlgorithm, train_env: VecEnv, eval_env: VecEnv, evaluator: PeriodicEvaluation
) -> bool:
    """Put captured state back after the model was loaded; returns whether the resume is exact.

    The torch RNG and gSDE's noise are put back again by :class:`RestoreAtFirstRollout`.
    """
    exact = all([_put_vec_state(train_env, state["train_env"]), _put_vec_state(eval_env, state["eval_env"])])
    if (checker := unwrap_vec_wrapper(train_env, CheckNan)) is not None and state.get("check_nan_steps") is not None:
        checker.steps = state["check_nan_steps"]
    normalizer = model.get_vec_normalize_env()
    if normalizer is not None and state["normalizer_returns"] is not None:
        seam.put_running_returns(normalizer, state["normalizer_returns"])
    seam.put_logger_state(model.logger, state["logger"])
    seam.put_recurrent_states(model, state.get("lstm"))
    evaluator.best_mean_return = state["evaluator"]["best_mean_return"]
    evaluator.last_mean_return = state["evaluator"].get("last_mean_return")
    evaluator.wall_offset = state["evaluator"]["wall_s"]
    evaluator.eval_s = state["evaluator"].get("eval_s", 0.0)  # snapshots before eval_s: not known
    evaluator.owed = OwedEvaluation.listed(state["evaluator"].get("owed"), model.num_timesteps)
    rng = state["rng"]
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    # ARS draws the first rollout's noise before RestoreAtFirstRollout runs: from the state at the rollout's end
    before_draw = state.get("torch_at_rollout_end")
    torch.set_rng_state(rng["torch"] if before_draw is None else before_draw)
    model.action_space.np_random.bit_generator.state = rng["action_space"]
    jax_models.put_key(model, state.get("jax_key"))  # snapshots of torch runs and older ones hold none
    if not exact:  # learn() resets the fresh envs, on seeds of their own: not the run's first episodes again
        seam.forget_last_obs(model)
        train_env.seed(restart_seed(model.seed, model.num_timesteps))
    return exact


def restart_seed(seed: int | None, step: int) -> int:
    """The seed of the rebuilt training envs' first episodes after a resume from ``step`` (copy i: this + i)."""
    return int(np.random.SeedSequence([seed or 0, step, 2]).generate_state(1)[0])


class RestoreAtFirstRollout(BaseCallback):
    """Puts the torch RNG and gSDE's exploration matrices back at the first rollout start of a resumed run.

    SB3 samples new gSDE noise at the start of every rollout, just before the callbacks' ``on_rollout_start``
    where snapshots are taken; undoing that first draw makes the continuation exact.
    """

    def __init__(self, state: dict[str, Any]) -> None:
        super().__init__()
        self.state: dict[str, Any] | None = state

    def _on_rollout_start(self) -> None:
        if self.state is None:
            return
        torch.set_rng_state(self.state["rng"]["torch"])
        seam.put_sde_noise(self.model, self.state.get("sde", []))
        self.state = None

    def _on_step(self) -> bool:
        return True


def rewind_eval_csv(path: Path, step: int) -> None:
    """Keep exactly the rows up to ``step`` (atomically), so nothing after the snapshot is duplicated. A row cut
    short by a kill (no newline after it) is dropped; any other damaged row was refused before the resume
    (:func:`check_target`) and raises ValueError naming its line."""
    if not path.exists():
        return
    rows = [[row[column] for column in EVAL_FIELDS] for row in eval_csv_rows(path.read_text())]
    kept = [row for row in rows if int(row[0]) <= step]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    with formats.open_for_writing(tmp) as f:
        f.write(EVAL_CSV_HEADER)
        csv.writer(f, lineterminator="\n").writerows(kept)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# The fields of run.json a resume reads (DESIGN.md, "The run-directory contract"); each is checked for its type.
RESUME_FIELDS = (*REQUIRED, "env", "algo")


def check_target(run_dir: Path, record: dict[str, Any] | None, completed_too: bool = False) -> Path | None:
    """Validate ``resume=<run_dir>``; the snapshot to continue from (None: the run is completed, unless
    ``completed_too``: a continuation to a larger budget). A folder whose signatures do not verify under this
    user's trust key is refused (:mod:`rlrun.record.signatures`)."""
    if record is None:
        raise UserError(
            f"resume={run_dir}: not a run folder (no run.json)",
            "give the folder of a run, e.g. resume=outputs/runs/gridworld-ppo/<stamp>",
        )
    damaged = record_problem(record, RESUME_FIELDS)
    if damaged is not None:  # before anything is trained: a record rlrun cannot finish would fail only at the end
        raise UserError(
            f"resume={run_dir}: {damaged}", "restore the run's run.json from a copy, or start the run again"
        )
    if record.get("status") == "completed" and not completed_too:
        return None
    # a run still going holds the folder's lock, which the resume holds now: a `running` record is interrupted
    if (damaged := read_config(run_dir)[1]) is not None:  # the config it would train with, read as data only
        raise UserError(f"resume={run_dir}: {damaged}", "restore the run's config.yaml from a copy, or start again")
    if (damaged := eval_csv_problem(run_dir / "eval.csv")) is not None:  # rewound at the resume: checked before
        raise UserError(f"resume={run_dir}: {damaged}", "restore the run's eval.csv from a copy, or start again")
    # nothing of the folder is unpickled or instantiated unless this user's rlrun signed it (or rlrun-trust did)
    signatures.check_folder(run_dir, f"resume={run_dir}")  # config.yaml, run.json, each snapshot of this run
    snapshot = newest_complete(run_dir / "snapshots")  # verified: every file against its manifest's checksum
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
    (None: the run is completed). The one place both the command line and :func:`rlrun.run.training.resume` use;
    the command line passes what it read on to the run, so the snapshot's checksums are read once."""
    record_path = run_dir / "run.json"
    try:
        record = reading.load_json(record_path) if record_path.is_file() else None
    except (OSError, ValueError) as error:  # a file that cannot be read, is not UTF-8 or not JSON
        raise UserError(
            f"resume={run_dir}: its run.json cannot be read ({error})", "restore run.json or start a new run"
        ) from None
    snapshot = check_target(run_dir, record)
    assert record is not None  # check_target refuses a folder without a record
    return record, snapshot
