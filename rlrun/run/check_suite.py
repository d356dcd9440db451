"""The checks of ``rlrun-check``, in report order (:func:`run_checks`): the env checks of
:mod:`rlrun.checks.env_checks` on exactly what ``rlrun`` would train, and with an algorithm the rules training
applies before it starts (:func:`algo_checks`). Each check is a :class:`~rlrun.checks.env_checks.Result`; an
exception from the env is that check's FAIL, not a traceback. ``rlrun-check`` (:mod:`rlrun.cli.check`) parses
its command line and prints what these return.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any

import gymnasium as gym
from omegaconf import DictConfig

from rlrun.checks import (
    constructor,
    env_checks,
    episode_checks,
    memory,
    native_agreement,
    preflight,
    resume_mode,
    rules,
)
from rlrun.checks.env_checks import CHECKERS, FAIL, PASS, SKIP, Result
from rlrun.config.errors import Problem, UserError, full_traceback_wanted, innermost_outside, raise_if
from rlrun.make import jax_models, models, native, vec_envs
from rlrun.make.gym_make import failure_fix, installed_package
from rlrun.run import dry_run

CHECKER_PACKAGES = ("gymnasium", "stable_baselines3")  # where the env checkers assert


def _problems(name: str, problems: list[Problem], warned: Sequence[Problem] = ()) -> Result:
    """A check made of :mod:`rlrun.checks.rules` problems: FAIL if any, warnings as notes under a PASS."""
    if len(problems) == 1:
        return env_checks.fail(name, *problems[0])
    notes = [line for problem, fix in [*problems, *warned] for line in (problem, f"  fix: {fix}")]
    if problems:
        return Result(name, FAIL, f"{len(problems)} problems", notes)
    return Result(name, PASS, f"{len(warned)} warning(s)" if warned else "", notes)


def algo_checks(cfg: DictConfig, env: gym.Env) -> list[Result]:
    """The rules training applies before it starts: arguments, fit to the spaces after the wrappers, budgets.

    The arguments check also builds the model once, as :func:`rlrun.run.dry_run.preflight` does, when the names and
    types are right and the pair fits; budget warnings are notes under a PASS, as training logs them.
    """
    raise_if(jax_models.unavailable(cfg))  # algo.backend: refused as training refuses it (exit 2)
    model_cls = models.model_class(cfg)  # made as training makes it: with jax, SBX's
    raise_if(jax_models.problems(cfg, model_cls))
    algo_cls = models.algo_class(cfg)
    name = algo_cls.__name__
    fit = rules.fit_problems(cfg, env, algo_cls, models.uses_her(cfg), model_cls) + native.problems(cfg)
    fit += memory.buffer_problems(cfg, rules.EnvFacts.of(env), algo_cls)  # the replay buffer fits in memory
    arguments = constructor.algo_problems(cfg, model_cls)
    if not arguments and not fit:  # SB3 would also reject a pair that does not fit: reported once, above
        arguments = dry_run.model_problems(cfg)
    budget = rules.budget_problems(cfg, algo_cls), rules.budget_warnings(cfg, algo_cls, rules.EnvFacts.of(env))
    fits = _problems(f"{name} fits {cfg.env.id}", fit)
    if fits.status == PASS and (note := rules.small_image_note(cfg, env.observation_space)):
        fits.notes.append(note)  # MlpPolicy for images too small for a CNN, as training logs it
    return [_problems(f"{name} arguments", arguments), fits, _problems("hyperparameters", *budget)]


def _guarded(name: str, check: Callable[..., Result | list[Result]], *args: Any) -> list[Result]:
    """Run ``check(*args)``; an exception from the env is that check's FAIL, not a traceback."""
    try:
        result = check(*args)
    except UserError:
        raise
    except Exception as error:
        if full_traceback_wanted():  # the full traceback, as for rlrun's other messages
            raise
        at, found = failure_fix(error, cfg_id(args))
        fix: str | None = found
        where = innermost_outside(error.__traceback__) or ""
        if isinstance(error, AssertionError) and installed_package(where) in CHECKER_PACKAGES:
            at = ""  # a checker's own verdict (Gymnasium's or SB3's assertion): its message is the reason
            fix = env_checks.GOAL_REWARD_FIX if "compute_reward" in str(error) else None
        return [env_checks.fail(name, f"{type(error).__name__}: {error}{at}", fix)]
    return result if isinstance(result, list) else [result]


def cfg_id(args: tuple[Any, ...]) -> str:
    """The env id of the config among a check's arguments (for the fix of a failure inside the env)."""
    return next((str(arg.env.id) for arg in args if isinstance(arg, DictConfig)), "")


def run_checks(cfg: DictConfig, with_algo: bool) -> list[Result]:
    """Every check in report order; raises :class:`UserError` when the config cannot be built at all."""
    raise_if(rules.range_problems(cfg))
    if cfg.steps < 1:
        raise UserError(f"steps={cfg.steps} must be positive", "set steps to 1 or more (default 1000)")
    steps = cfg.steps
    with closing(vec_envs.make_env(cfg)) as probe:  # a bad id or a wrapper that cannot apply stops here
        raise_if(rules.observation_problems(cfg.env.id, probe.observation_space))  # SB3 cannot train
        preflight.reward_checks(cfg, vec_envs.first_step(cfg))  # nor on a reward that is not one number
        results: list[Result] = []
        for name, checker in CHECKERS.items():
            [checked] = _guarded(name, env_checks.run_checker, name, checker, probe)
            results.append(env_checks.by_family_design(cfg, checked, checker, probe))
        rendered = _guarded("render modes", _render_modes, cfg, probe)
        results[0].detail = "; ".join(filter(None, [rendered[0].detail, results[0].detail]))
        results[0].notes += rendered[0].notes
        raw = env_checks.raw_env_problems(probe, results) if _wrapped(cfg) else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the checkers above already reported what the env warns about
            results += _guarded("seeded determinism", env_checks.determinism, cfg, steps)
            results += _guarded("resume mode", resume_mode.check, cfg)  # exact or restart_episodes, with the reason
            results[-1] = resume_mode.with_determinism(results[-1], results[-2])
            results += _guarded("goal env compute_reward", env_checks.goal_rewards, cfg, steps)
            if with_algo:
                results += _guarded("algorithm", algo_checks, cfg, probe)
            else:
                results.append(Result("algorithm", SKIP, "no algo= on the command line (e.g. add algo=ppo)"))
            results += _guarded("random rollout", env_checks.rollout, cfg, steps)
            results += _guarded(episode_checks.EPISODE_ENDS, episode_checks.episode_ends, cfg, steps)
            results += _guarded(episode_checks.BOUNDS, episode_checks.observation_bounds, cfg, steps)
            if cfg.env.vectorization == "native":  # the batched training envs against the gym ones
                results += _guarded(native_agreement.NAME, native_agreement.agreement, cfg, steps)
    return results + ([raw] if raw else [])


def _render_modes(cfg: DictConfig, probe: gym.Env) -> Result:
    """Gymnasium's render checks, done headless (:func:`rlrun.checks.env_checks.render_modes`), as one line's detail."""
    return Result("render modes", PASS, *env_checks.render_modes(cfg, list(probe.metadata.get("render_modes", []))))


def _wrapped(cfg: DictConfig) -> bool:
    """Whether the env trains under wrappers (the family's ``env.wrappers`` or the user's ``wrappers``)."""
    return bool(cfg.wrappers) or bool(cfg.env.get("wrappers"))
