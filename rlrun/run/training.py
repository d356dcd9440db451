"""One training run, top to bottom: check -> build envs -> check -> build model -> learn -> evaluate -> save.

:func:`train` starts a run and :func:`resume` continues one from its newest complete snapshot. Both check the config,
build the envs and check them, then build (or load) the model, each builder called once with the checks of
:mod:`rlrun.checks.preflight` between them; then :class:`rlrun.run.learning.Learning` learns, evaluates and saves,
recording a failure or a stop in run.json. They are plain functions of the config, the run folder and the provenance
Hydra knows (``meta``), so tests call them without Hydra's runtime.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnv

from rlrun.checks import preflight, resume_mode
from rlrun.checks.rules import EnvFacts
from rlrun.config import budget
from rlrun.config.errors import UserError
from rlrun.config.upgrade import load_config
from rlrun.make import models, vec_envs
from rlrun.record import signatures
from rlrun.record.lock import claim
from rlrun.record.run_record import RunRecord
from rlrun.run import banner, continuation, model_files, resume_order, resume_state, signals, snapshots
from rlrun.run.learning import Learning
from rlrun.track.session import Tracking

log = logging.getLogger("rlrun")

Target = tuple[dict[str, Any], Path | None]  # a run's record and the snapshot it resumes from (None: completed)


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
    with signals.deferring(), claim(run_dir):  # a stop before training starts: recorded by it, as any stop
        return _train(cfg, run_dir, meta)


def _train(cfg: DictConfig, run_dir: Path, meta: dict[str, Any]) -> dict[str, Any]:
    cfg, scaled = budget.fit_to_budget(cfg, meta.get("overrides", []))  # the run's config: what config.yaml records
    algo_cls, model_cls = _algorithm(cfg)
    tracking = Tracking.from_config(cfg)  # the loggers' settings (a tracking URI) checked before training
    configure_torch(cfg)
    set_random_seed(cfg.seed)
    train_env, eval_env = _envs(cfg, statistics=None)
    try:
        facts = EnvFacts.of(train_env)
        policy = preflight.fit_checks(cfg, facts, algo_cls, model_cls)
        preflight.reward_checks(cfg, vec_envs.first_step(cfg))  # one number per step (SB3's Monitor needs it)
        mode = resume_mode.decide(cfg)  # exact or restart_episodes, from a round trip of the env stack
        model = _model(cfg, train_env)
        # every refusal is behind: the banner says what starts, then what its budget probably does not do as meant
        _log_lines(banner.start_lines(cfg, meta, scaled))
        preflight.log_budget_warnings(cfg, facts, algo_cls)
        log.info(resume_mode.resume_mode_line(mode))
        record = RunRecord.start(run_dir, cfg, meta, policy, mode.mode)
        signatures.sign_run(run_dir)  # config.yaml signed: a resume of this run may instantiate it
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)
    model.set_logger(tracking.logger(run_dir, resumed_from=None))
    learning = Learning(cfg, run_dir, meta, (train_env, eval_env), record, tracking)
    with learning.recorded():
        return learning.learn(model, first=[], snapshot=None)


def resume(
    run_dir: str | Path,
    progress_bar: str = "auto",
    meta: dict[str, Any] | None = None,
    total_timesteps: int | None = None,
    target: Target | None = None,
    progress_every: float | None = None,
) -> dict[str, Any]:
    """Continue the run in ``run_dir`` from its newest complete snapshot, with the run's own config; holding
    the folder's lock, as :func:`train` does. With ``total_timesteps`` above the run's budget, a continuation:
    the run, completed or not, trains on to that budget (:mod:`rlrun.run.continuation`). ``target``: its record
    and snapshot as already read and verified (``resume=`` on the command line). ``progress_bar`` and
    ``progress_every`` (when given) replace the run's own: they do not change what is trained."""
    run_dir, meta = Path(run_dir), meta or {}
    shown = {"progress_bar": progress_bar} | ({} if progress_every is None else {"progress_every": progress_every})
    if target is None:  # a target was read after this same check (cli.invocation, before the lock): not twice
        resume_order.check_before_lock(run_dir)  # read-only: a folder refused is never written to, nor its .lock
    with signals.deferring(), claim(run_dir):
        data, snapshot = _target(run_dir, total_timesteps, target)
        if snapshot is None:
            log.info("%s is already completed; nothing to do", run_dir)
            return data["final"]
        snapshots.clean_run(run_dir)  # rlrun's own unfinished writes first: a resume after a full disk has their space
        # the run's own record, upgraded if an older rlrun wrote it (the file is never rewritten); the keys
        # resume= may change are set on a new config, not on the one loaded
        changes = {**shown, **continuation.changes(total_timesteps)}
        cfg = OmegaConf.merge(load_config(run_dir), changes)
        assert isinstance(cfg, DictConfig)
        return _resume(cfg, run_dir, meta, data, snapshot, total_timesteps)


def _target(run_dir: Path, total_timesteps: int | None, given: Target | None) -> Target:
    """The record and snapshot to resume from: ``given`` (read and verified by the command line), else the newest
    complete one, or a continuation's (the final state)."""
    if given is not None:
        return given
    if total_timesteps is None:
        return resume_state.load_target(run_dir)
    return continuation.target(run_dir, total_timesteps)


def _resume(
    cfg: DictConfig,
    run_dir: Path,
    meta: dict[str, Any],
    data: dict[str, Any],
    snapshot: Path,
    total_timesteps: int | None,
) -> dict[str, Any]:
    """:func:`resume` once the run's record (``data``), ``snapshot`` and config are read."""
    _log_lines(banner.start_lines(cfg, data))  # the run's own preset and overrides
    algo_cls, model_cls = _algorithm(cfg)
    tracking = Tracking.from_config(cfg)
    configure_torch(cfg)
    step = snapshots.manifest(snapshot)["step"]
    train_env, eval_env = _envs(cfg, model_files.statistics(snapshot))
    try:
        preflight.fit_checks(cfg, EnvFacts.of(train_env), algo_cls, model_cls)
        preflight.log_budget_warnings(cfg, EnvFacts.of(train_env), algo_cls)
        log.info("resuming %s from step %d", run_dir, step)
        mode = resume_state.resumed_mode(cfg, data)
        if total_timesteps is not None:  # config.yaml, run.json's budgets, signed; the schedule rule said
            continuation.extend(run_dir, data, cfg, step)
        record = RunRecord.reopen(run_dir, data, step, meta)
    except BaseException:
        _close(train_env, eval_env)
        raise
    tracking.begin(run_dir, cfg, record.data, meta)  # continues the same tracked runs, from the snapshot's step
    learning = Learning(cfg, run_dir, meta, (train_env, eval_env), record, tracking)
    with learning.recorded():
        model, first = learning.restored(snapshot, mode.exact)
        return learning.learn(model, first, snapshot)


def _algorithm(cfg: DictConfig) -> tuple[type[BaseAlgorithm], type[BaseAlgorithm]]:
    """The config checked with the algorithm's classes: SB3's, which the rules check against, and the one the run
    trains (SBX's with ``algo.backend=jax``), made once the ranges and the backend have passed."""
    preflight.config_checks(cfg)  # ranges first: torch_threads among them
    model_cls = models.model_class(cfg)  # with jax, XLA's threads are set here, as JAX starts
    return preflight.algorithm_checks(cfg, model_cls), model_cls


def _envs(cfg: DictConfig, statistics: Path | None) -> tuple[VecEnv, VecEnv]:
    """The training envs (continuing from saved VecNormalize ``statistics``, if any) and the evaluation copies."""
    try:
        train_env = vec_envs.make_train_env(cfg, statistics)
    except Exception as error:
        _explain(cfg, error)
        raise
    try:
        return train_env, _eval_env(cfg)
    except BaseException:
        train_env.close()
        raise


def _eval_env(cfg: DictConfig) -> VecEnv:
    copies = vec_envs.eval_copies(cfg)  # no more than the episodes asked for
    try:
        return vec_envs.make_eval_env(cfg, n_envs=copies)
    except Exception as error:
        _explain(cfg, error)
        raise


def _explain(cfg: DictConfig, error: Exception) -> None:
    """Raise what one env copy, made as training makes it, says of envs that could not be made (``error``): the
    observations SB3 cannot take (:func:`rlrun.checks.preflight.observation_checks`), or why the copy itself cannot
    be made, where subprocess workers failed to make theirs. Returns when it says no more than ``error``."""
    if isinstance(error, UserError):
        return
    try:  # a UserError here says what subprocess workers met (a bad id: their pipe only broke)
        with contextlib.closing(vec_envs.make_env(cfg)) as probe:
            observation_space = probe.observation_space
    except UserError:
        raise
    except Exception:  # the copy fails otherwise: the first error says more
        return
    preflight.observation_checks(cfg, observation_space)


def _model(cfg: DictConfig, train_env: VecEnv) -> BaseAlgorithm:
    """The algorithm built on ``train_env``; what it raises while being built is a user error naming the keys."""
    try:
        return models.make_model(cfg, train_env)
    except Exception as error:
        preflight.refuse_model(cfg, error)


def _log_lines(lines: list[str]) -> None:
    for line in lines:
        log.info("%s", line)


def _close(*envs: VecEnv) -> None:
    for env in envs:
        env.close()
