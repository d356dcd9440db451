"""One training run, top to bottom: validate -> build envs -> build model -> learn -> evaluate -> save.

:func:`train` starts a run and :func:`resume` continues one from its newest complete snapshot; both
go through :func:`_run`. They are plain functions of the config, the run folder and the provenance
Hydra knows (``meta``), so tests call them without Hydra's runtime.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HParam, Logger
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnv

from rlrun.checks import preflight
from rlrun.checks.rules import EnvFacts
from rlrun.config.upgrade import load_config
from rlrun.make import models, vec_envs
from rlrun.record import signatures
from rlrun.record.formats import remove_partial_writes, write_failure, writing
from rlrun.record.lock import claim
from rlrun.record.run_record import RunRecord
from rlrun.run import resume_state, snapshots
from rlrun.run.evaluation import EvaluationStopped, PeriodicEvaluation, evaluate, sync_normalization
from rlrun.run.heartbeat import KeepRecordCurrent
from rlrun.run.interrupts import InterruptCallback, LearningStopped, RunInterrupted, StoppableCallbacks
from rlrun.startup import gc_pause
from rlrun.track.session import Tracking

log = logging.getLogger("rlrun")


def configure_torch(cfg: DictConfig) -> None:
    """torch for this run: ``torch_threads`` threads, and distribution arguments checked only with
    ``check_nan``. By default torch validates every distribution SB3 builds, at every step of every
    rollout and evaluation: about 15% of PPO's time here, for a check that never changes a result (an
    invalid distribution fails later anyway, without the early message)."""
    torch.set_num_threads(cfg.torch_threads)
    torch.distributions.Distribution.set_default_validate_args(bool(cfg.check_nan))


def train(cfg: DictConfig, run_dir: str | Path, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train the configured agent into ``run_dir``; return the final evaluation (run.json's ``final``).

    The config is checked first; then the envs and the model are built once, each checked as it is built,
    and the run's record starts only once all of that passed. The run holds its folder's lock throughout
    (:mod:`rlrun.record.lock`): a folder another process writes in is refused before anything is written.
    """
    run_dir, meta = Path(run_dir), meta or {}
    with claim(run_dir):
        return _train(cfg, run_dir, meta)


def _train(cfg: DictConfig, run_dir: Path, meta: dict[str, Any]) -> dict[str, Any]:
    algo_cls = preflight.config_checks(cfg)  # ranges first: torch_threads among them
    tracking = Tracking.from_config(cfg)  # the loggers' settings (a tracking URI) checked before training
    configure_torch(cfg)
    set_random_seed(cfg.seed)
    train_env, eval_env = _envs(cfg, statistics=None)
    try:
        policy = preflight.fit_checks(cfg, EnvFacts.of(train_env), algo_cls)
        model = preflight.built_model(cfg, lambda: models.make_model(cfg, train_env))
        record = RunRecord.start(run_dir, cfg, meta, policy)
        signatures.sign_run(run_dir)  # config.yaml signed: a resume of this run may instantiate it
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)
    model.set_logger(tracking.logger(run_dir, resumed_from=None))
    return _run(cfg, run_dir, record, meta, train_env, eval_env, lambda evaluator: (model, []), None, tracking)


def resume(run_dir: str | Path, progress_bar: str = "auto", meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Continue the run in ``run_dir`` from its newest complete snapshot, with the run's own config; holding
    the folder's lock, as :func:`train` does."""
    run_dir, meta = Path(run_dir), meta or {}
    with claim(run_dir):
        return _resume(run_dir, progress_bar, meta)


def _resume(run_dir: Path, progress_bar: str, meta: dict[str, Any]) -> dict[str, Any]:
    data, snapshot = resume_state.load_target(run_dir)
    if snapshot is None:
        log.info("%s is already completed; nothing to do", run_dir)
        return data["final"]
    snapshots.clean_run(run_dir)  # rlrun's own unfinished writes first: a resume after a full disk has their space
    # the run's own record, upgraded if an older rlrun wrote it (the file is never rewritten); the one key
    # resume= may change is set on a new config, not on the one loaded
    cfg = OmegaConf.merge(load_config(run_dir), {"progress_bar": progress_bar})
    assert isinstance(cfg, DictConfig)
    algo_cls = preflight.config_checks(cfg)
    tracking = Tracking.from_config(cfg)
    configure_torch(cfg)
    step = snapshots.manifest(snapshot)["step"]
    train_env, eval_env = _envs(cfg, _statistics(snapshot))
    try:
        preflight.fit_checks(cfg, EnvFacts.of(train_env), algo_cls)
        log.info("resuming %s from step %d", run_dir, step)
        record = RunRecord.reopen(run_dir, data, step, meta)
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)  # continues the same tracked runs, from the snapshot's step

    def restored(evaluator: PeriodicEvaluation) -> tuple[BaseAlgorithm, list[BaseCallback]]:
        return _restore(cfg, run_dir, snapshot, train_env, eval_env, evaluator, tracking)

    return _run(cfg, run_dir, record, meta, train_env, eval_env, restored, snapshot, tracking)


def _envs(cfg: DictConfig, statistics: Path | None) -> tuple[VecEnv, VecEnv]:
    """The training envs (continuing from saved VecNormalize ``statistics``, if any) and the evaluation copies."""
    train_env = preflight.built_envs(cfg, lambda: vec_envs.make_train_env(cfg, statistics))  # names a Text subspace
    try:
        copies = vec_envs.eval_copies(cfg)  # no more than the episodes asked for
        return train_env, preflight.built_envs(cfg, lambda: vec_envs.make_eval_env(cfg, n_envs=copies))
    except BaseException:
        train_env.close()
        raise


def _close(*envs: VecEnv) -> None:
    for env in envs:
        env.close()


def _progress_bar(cfg: DictConfig, meta: dict[str, Any]) -> bool:
    setting = str(cfg.progress_bar).lower()
    if setting == "auto":
        return sys.stderr.isatty() and not meta.get("multirun", False)
    return setting == "true"


def _run(
    cfg: DictConfig,
    run_dir: Path,
    record: RunRecord,
    meta: dict[str, Any],
    train_env: VecEnv,
    eval_env: VecEnv,
    model_for: Callable[[PeriodicEvaluation], tuple[BaseAlgorithm, list[BaseCallback]]],
    snapshot: Path | None,
    tracking: Tracking,
) -> dict[str, Any]:
    """Learn with the built envs and the model ``model_for`` gives (with the callbacks it needs first), then
    complete the run; a failure or a stop is recorded in run.json. The envs are closed at the end, and the
    tracked runs end with run.json's status."""
    gc_pause.resume()  # paused by the command line while the process started
    so_far: list[Callable[[], dict[str, Any]]] = []  # run.json's steps and seconds so far, once there are any
    try:
        sample_seed = None if cfg.eval.deterministic else cfg.seed
        success_key = cfg.env.get("success_key", "is_success")  # runs made before the key have none
        evaluator = PeriodicEvaluation(
            eval_env, cfg.eval.every, cfg.eval.episodes, run_dir / "eval.csv", sample_seed, success_key
        )
        model, first = model_for(evaluator)
        so_far.append(lambda: RunRecord.counts(model.num_timesteps, evaluator.wall()))
        live = KeepRecordCurrent(record, evaluator.wall, cfg.eval.every)
        snapshotter = snapshots.SnapshotCallback(
            run_dir / "snapshots",
            cfg.snapshot.every,
            cfg.snapshot.keep,
            cfg.snapshot.replay_buffer,
            state=lambda: resume_state.capture(model, train_env, eval_env, evaluator),
            score=lambda: evaluator.last_mean_return,  # the latest periodic evaluation's mean return
            written=live.save,
            resumed_from=snapshot,
        )
        interrupts = InterruptCallback(snapshotter.snapshot)
        evaluator.stopping = lambda: interrupts.received is not None  # an evaluation ends at a stop signal
        with interrupts.installed():  # through the final evaluation: a signal then lets the run complete
            with contextlib.suppress(LearningStopped):  # how a stop signal ends ARS, which ignores a callback's False
                model.learn(
                    cfg.total_timesteps - model.num_timesteps,
                    callback=StoppableCallbacks([*first, evaluator, live, snapshotter], interrupts),
                    reset_num_timesteps=snapshot is None,
                    progress_bar=_progress_bar(cfg, meta),
                )
            if interrupts.received is not None:
                interrupts.stop_snapshot or snapshotter.snapshot()  # steps and seconds recorded as it is written
                record.finish("interrupted")
                raise RunInterrupted(interrupts.received, str(run_dir))
            try:
                return _complete(cfg, run_dir, record, model, train_env, eval_env, so_far[0](), evaluator.stopping)
            except EvaluationStopped:  # trained, not evaluated: resume= does the final evaluation
                snapshotter.snapshot()
                record.finish("interrupted")
                raise RunInterrupted(interrupts.received or signal.SIGINT, str(run_dir)) from None
    except RunInterrupted:
        raise
    except KeyboardInterrupt:  # a third signal, or one outside training: resumable from the last snapshot
        record.finish("interrupted", **(so_far[0]() if so_far else {}))
        raise
    except BaseException as error:
        failure = write_failure(error, run_dir)  # a full disk: the file it could not write, and why
        record.fail(failure or error, **(so_far[0]() if so_far else {}))
        if failure is not None and failure is not error:
            raise failure from error
        raise
    finally:
        _close(train_env, eval_env)
        tracking.end(record)


def _complete(
    cfg: DictConfig,
    run_dir: Path,
    record: RunRecord,
    model: BaseAlgorithm,
    train_env: VecEnv,
    eval_env: VecEnv,
    counts: dict[str, Any],
    stopping: Callable[[], bool],
) -> dict[str, Any]:
    """Training is over: the final evaluation (with the final VecNormalize statistics), the final model, and
    run.json completed with ``counts`` (the steps and seconds of training). A stop signal (``stopping``) ends the
    final evaluation with :class:`EvaluationStopped`."""
    record.progress(counts["timesteps"], counts["wall_s"])
    sync_normalization(train_env, eval_env)  # the final statistics, not the last evaluation's
    sample_seed = None if cfg.eval.deterministic else cfg.seed + model.num_timesteps  # as PeriodicEvaluation's
    success_key = cfg.env.get("success_key", "is_success")
    final = evaluate(
        model, eval_env, cfg.eval.final_episodes, sample_seed=sample_seed, stop=stopping, success_key=success_key
    )
    _save_final(model, run_dir)
    _log_final(model.logger, cfg, final.summary(), model.num_timesteps)
    record.finish("completed", **counts, final=final.summary())
    return final.summary()


def _statistics(snapshot: Path | None) -> Path | None:
    """The snapshot's VecNormalize statistics, if it has any."""
    if snapshot is None or not snapshots.listed(snapshot, "vecnormalize.pkl"):  # only what its manifest lists
        return None
    return snapshot / "vecnormalize.pkl"


def _restore(
    cfg: DictConfig,
    run_dir: Path,
    snapshot: Path,
    train_env: VecEnv,
    eval_env: VecEnv,
    evaluator: PeriodicEvaluation,
    tracking: Tracking,
) -> tuple[BaseAlgorithm, list[BaseCallback]]:
    """Load the snapshot's model, buffer and state; rewind the logs to its step. Also returns the callback
    that puts back, at the first rollout start, what SB3 draws anew there."""
    model = models.load_model(cfg, snapshot / "model.zip", train_env)
    step = model.num_timesteps
    if isinstance(model, OffPolicyAlgorithm):
        if snapshots.listed(snapshot, snapshots.BUFFER):  # a file the signed manifest does not list is never read
            # the envs continue the unfinished episode, so HER must not truncate it
            model.load_replay_buffer(snapshot / snapshots.BUFFER, truncate_last_traj=False)
        else:
            warnings.warn(f"{snapshot} holds no replay buffer; continuing with an empty one", stacklevel=2)
    model.set_logger(tracking.logger(run_dir, resumed_from=step))  # TensorBoard's events after step purged
    state = snapshots.load_state(snapshot)
    if not resume_state.restore(state, model, train_env, eval_env, evaluator):
        log.warning("the envs could not be restored and were reset: the resumed run is correct but not bit-identical")
    resume_state.rewind_eval_csv(run_dir / "eval.csv", step)
    return model, [resume_state.RestoreAtFirstRollout(state)]


def _save_final(model: Any, run_dir: Path) -> None:
    """``model.zip`` (and ``vecnormalize.pkl`` and ``.npz``), each written under a temporary name and renamed;
    then the run manifest is signed again."""
    tmp = run_dir / ".model.tmp.zip"
    with writing(run_dir / "model.zip"):
        try:
            model.save(tmp)
            os.replace(tmp, run_dir / "model.zip")
            if (normalizer := model.get_vec_normalize_env()) is not None:
                vec_envs.save_statistics(
                    normalizer, run_dir / ".vecnormalize.tmp.pkl", run_dir / ".vecnormalize.tmp.npz"
                )
                os.replace(run_dir / ".vecnormalize.tmp.pkl", run_dir / "vecnormalize.pkl")
                os.replace(run_dir / ".vecnormalize.tmp.npz", run_dir / "vecnormalize.npz")  # data only (not trusted)
        except BaseException:
            remove_partial_writes(run_dir)  # their space back (a full disk): run.json can still record why
            raise
    signatures.sign_run(run_dir)  # the run manifest now covers the final model and statistics


def _hparams(cfg: DictConfig) -> dict[str, Any]:
    """The config flattened to dotted keys with values TensorBoard's HParams tab can show."""
    flat: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            flat[prefix[:-1]] = node if isinstance(node, (bool, int, float, str)) else str(node)

    walk(OmegaConf.to_container(cfg, resolve=True), "")
    return flat


def _log_final(logger: Logger, cfg: DictConfig, final: dict[str, Any], step: int) -> None:
    """Final scalars and the HParams summary, so TensorBoard's HParams tab compares runs."""
    metrics = {"final/mean_return": final["mean_return"]}
    if final["success_rate"] is not None:
        metrics["final/success_rate"] = final["success_rate"]
    for key, value in metrics.items():
        logger.record(key, value)
    logger.record("hparams", HParam(_hparams(cfg), metrics), exclude=("stdout", "log", "json", "csv"))
    logger.dump(step)
    logger.close()
