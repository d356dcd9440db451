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
import time
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
from rlrun.config import budget
from rlrun.config.upgrade import load_config
from rlrun.make import models, vec_envs
from rlrun.record import signatures
from rlrun.record.formats import remove_partial_writes, write_failure, writing
from rlrun.record.lock import claim
from rlrun.record.run_record import RunRecord
from rlrun.run import banner, continuation, progress, resume_order, resume_state, snapshots
from rlrun.run.evaluation import EvaluationStopped, PeriodicEvaluation, evaluate, refuse_non_finite, sync_normalization
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
    cfg, scaled = budget.fit_to_budget(cfg, meta.get("overrides", []))  # the run's config: what config.yaml records
    _log_lines(banner.start_lines(cfg, meta, scaled))
    algo_cls = preflight.config_checks(cfg)  # ranges first: torch_threads among them
    tracking = Tracking.from_config(cfg)  # the loggers' settings (a tracking URI) checked before training
    configure_torch(cfg)
    set_random_seed(cfg.seed)
    train_env, eval_env = _envs(cfg, statistics=None)
    try:
        policy = preflight.fit_checks(cfg, EnvFacts.of(train_env), algo_cls)
        mode = resume_state.started_mode(cfg)  # exact or restart_episodes, from a round trip of the env stack
        model = preflight.built_model(cfg, lambda: models.make_model(cfg, train_env))
        record = RunRecord.start(run_dir, cfg, meta, policy, mode.mode)
        signatures.sign_run(run_dir)  # config.yaml signed: a resume of this run may instantiate it
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)
    model.set_logger(tracking.logger(run_dir, resumed_from=None))
    return _run(cfg, run_dir, record, meta, train_env, eval_env, lambda evaluator: (model, []), None, tracking)


def resume(
    run_dir: str | Path,
    progress_bar: str = "auto",
    meta: dict[str, Any] | None = None,
    total_timesteps: int | None = None,
    target: tuple[dict[str, Any], Path | None] | None = None,
    progress_every: float | None = None,
) -> dict[str, Any]:
    """Continue the run in ``run_dir`` from its newest complete snapshot, with the run's own config; holding
    the folder's lock, as :func:`train` does. With ``total_timesteps`` above the run's budget, a continuation:
    the run, completed or not, trains on to that budget (:mod:`rlrun.run.continuation`). ``target``: its record
    and snapshot as already read and verified (``resume=`` on the command line). ``progress_bar`` and
    ``progress_every`` (when given) replace the run's own: they do not change what is trained."""
    run_dir, meta = Path(run_dir), meta or {}
    shown = {"progress_bar": progress_bar} | ({} if progress_every is None else {"progress_every": progress_every})
    if target is None:  # a target was read after this same check (resume_order.hold_for_resume): not twice
        resume_order.check_before_lock(run_dir)  # read-only: a folder refused is never written to, nor its .lock
    with claim(run_dir):
        return _resume(run_dir, shown, meta, total_timesteps, target)


def _resume(
    run_dir: Path,
    shown: dict[str, Any],
    meta: dict[str, Any],
    total_timesteps: int | None,
    target: tuple[dict[str, Any], Path | None] | None,
) -> dict[str, Any]:
    if target is not None:
        data, snapshot = target
    elif total_timesteps is None:
        data, snapshot = resume_state.load_target(run_dir)
    else:
        data, snapshot = continuation.target(run_dir, total_timesteps)
    if snapshot is None:
        log.info("%s is already completed; nothing to do", run_dir)
        return data["final"]
    snapshots.clean_run(run_dir)  # rlrun's own unfinished writes first: a resume after a full disk has their space
    # the run's own record, upgraded if an older rlrun wrote it (the file is never rewritten); the keys
    # resume= may change are set on a new config, not on the one loaded
    changes = {**shown, **continuation.changes(total_timesteps)}
    cfg = OmegaConf.merge(load_config(run_dir), changes)
    assert isinstance(cfg, DictConfig)
    _log_lines(banner.start_lines(cfg, data))  # the run's own preset and overrides
    algo_cls = preflight.config_checks(cfg)
    tracking = Tracking.from_config(cfg)
    configure_torch(cfg)
    step = snapshots.manifest(snapshot)["step"]
    train_env, eval_env = _envs(cfg, _statistics(snapshot))
    try:
        preflight.fit_checks(cfg, EnvFacts.of(train_env), algo_cls)
        log.info("resuming %s from step %d", run_dir, step)
        mode = resume_state.resumed_mode(cfg, data)
        if total_timesteps is not None:  # config.yaml, run.json's budgets, signed; the schedule rule said
            continuation.extend(run_dir, data, cfg, step)
        record = RunRecord.reopen(run_dir, data, step, meta)
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)  # continues the same tracked runs, from the snapshot's step

    def restored(evaluator: PeriodicEvaluation) -> tuple[BaseAlgorithm, list[BaseCallback]]:
        return _restore(cfg, run_dir, snapshot, train_env, eval_env, evaluator, tracking, mode.exact)

    return _run(cfg, run_dir, record, meta, train_env, eval_env, restored, snapshot, tracking)


def _log_lines(lines: list[str]) -> None:
    for line in lines:
        log.info("%s", line)


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


def _progress(cfg: DictConfig, meta: dict[str, Any]) -> progress.Progress:
    """What the run prints as it goes (:mod:`rlrun.run.progress`); a sweep's job, to its own log only."""
    every_s = float(OmegaConf.select(cfg, "progress_every", default=60))  # a run older than the key: 60
    bar = _progress_bar(cfg, meta)
    return progress.Progress(cfg.total_timesteps, every_s, bar, console=not meta.get("multirun", False))


def _eval_s(evaluator: PeriodicEvaluation) -> float:
    return round(evaluator.eval_s, 3)


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
    shown = _progress(cfg, meta)  # what the run prints as it goes
    so_far: list[Callable[[], dict[str, Any]]] = []  # run.json's steps and seconds so far, once there are any
    try:
        sample_seed = None if cfg.eval.deterministic else cfg.seed
        success_key = cfg.env.get("success_key", "is_success")  # runs made before the key have none
        evaluator = PeriodicEvaluation(
            eval_env,
            cfg.eval.every,
            cfg.eval.episodes,
            run_dir / "eval.csv",
            sample_seed,
            success_key,
            budget=cfg.total_timesteps,
        )
        model, first = model_for(evaluator)
        exact = record.data.get("resume_mode") != "restart_episodes"  # snapshots hold the envs themselves
        so_far.append(lambda: {**RunRecord.counts(model.num_timesteps, evaluator.wall()), "eval_s": _eval_s(evaluator)})
        evaluator.on_result = shown.evaluation
        live = KeepRecordCurrent(record, evaluator.wall, cfg.eval.every, cfg.total_timesteps)
        snapshotter = snapshots.SnapshotCallback(
            run_dir / "snapshots",
            cfg.snapshot.every,
            cfg.snapshot.keep,
            cfg.snapshot.replay_buffer,
            state=lambda: resume_state.capture(model, train_env, eval_env, evaluator, exact),
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
                    callback=StoppableCallbacks([*first, evaluator, shown, live, snapshotter], interrupts),
                    reset_num_timesteps=snapshot is None,
                )
            if interrupts.received is not None:
                interrupts.stop_snapshot or snapshotter.snapshot()  # steps and seconds recorded as it is written
                record.finish("interrupted", eval_s=_eval_s(evaluator))
                raise RunInterrupted(interrupts.received, str(run_dir))
            snapshotter.snapshot()  # the final state, before the final evaluation: a continuation starts from it
            try:
                return _complete(cfg, run_dir, record, model, (train_env, eval_env), evaluator, shown)
            except EvaluationStopped:  # trained, not evaluated: resume= does the final evaluation
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
        shown.close()  # a progress bar left by an error
        _close(train_env, eval_env)
        tracking.end(record)


def _complete(
    cfg: DictConfig,
    run_dir: Path,
    record: RunRecord,
    model: BaseAlgorithm,
    envs: tuple[VecEnv, VecEnv],
    evaluator: PeriodicEvaluation,
    shown: progress.Progress,
) -> dict[str, Any]:
    """Training is over: the final evaluation (with the final VecNormalize statistics), the final model, and
    run.json completed with the steps and seconds of the whole run (``eval_s``: those spent evaluating). A stop
    signal ends the final evaluation with :class:`EvaluationStopped`."""
    train_env, eval_env = envs
    record.progress(model.num_timesteps, evaluator.wall())
    sync_normalization(train_env, eval_env)  # the final statistics, not the last evaluation's
    sample_seed = None if cfg.eval.deterministic else cfg.seed + model.num_timesteps  # as PeriodicEvaluation's
    shown.final_started(cfg.eval.final_episodes, eval_env.num_envs)
    started = time.perf_counter()
    success_key = cfg.env.get("success_key", "is_success")
    final = evaluate(
        model, eval_env, cfg.eval.final_episodes, sample_seed=sample_seed, stop=evaluator.stopping,
        success_key=success_key,
    )  # fmt: skip
    evaluator.eval_s += time.perf_counter() - started
    refuse_non_finite(final, model)
    shown.final_done(final, time.perf_counter() - started)
    _save_final(model, run_dir)
    _log_final(model.logger, cfg, final.summary(), model.num_timesteps)
    counts = RunRecord.counts(model.num_timesteps, evaluator.wall())
    record.finish("completed", **counts, eval_s=_eval_s(evaluator), final=final.summary())
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
    exact: bool,
) -> tuple[BaseAlgorithm, list[BaseCallback]]:
    """Load the snapshot's model, buffer and state; rewind the logs to its step. Also returns the callback
    that puts back, at the first rollout start, what SB3 draws anew there. Not ``exact`` (the run's resume mode
    is ``restart_episodes``): the envs start new episodes, so HER's unfinished one is cut."""
    model = models.load_model(cfg, snapshot / "model.zip", train_env)
    step = model.num_timesteps
    if isinstance(model, OffPolicyAlgorithm):
        if snapshots.listed(snapshot, snapshots.BUFFER):  # a file the signed manifest does not list is never read
            # exact: the envs continue the unfinished episode, so HER must not truncate it; else it must, as it says
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "The last trajectory in the replay buffer will be truncated")
                model.load_replay_buffer(snapshot / snapshots.BUFFER, truncate_last_traj=not exact)
        else:
            log.warning(
                "%s holds no replay buffer (snapshot.replay_buffer=none): continuing with an empty one", snapshot
            )
    model.set_logger(tracking.logger(run_dir, resumed_from=step))  # TensorBoard's events after step purged
    state = snapshots.load_state(snapshot)
    if not resume_state.restore(state, model, train_env, eval_env, evaluator) and exact:
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
