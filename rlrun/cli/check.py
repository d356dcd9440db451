"""``rlrun-check`` (``python -m rlrun.cli.check env=X [algo=Y] [wrappers=...]``): find problems before training.

Builds exactly what ``rlrun`` would train (through :mod:`rlrun.make.vec_envs`) and reports each check as PASS, FAIL
or SKIP: the env checks of :mod:`rlrun.checks.env_checks`, and with ``algo`` on the command line (``algo=...``
or any ``algo.<key>=...``) the rules training applies before it starts (:mod:`rlrun.checks.rules`,
:mod:`rlrun.algo_checks`): the algorithm's arguments, its fit to the spaces after the wrappers, and the
budgets. ``sim=N`` prints a random-action episode step by step instead (``render=ansi`` prints the
frames). Exit status: 0 all passed, 1 a check failed, 2 a user mistake that stops the checks from
running (bad id, bad value). Writes no files.
"""

from __future__ import annotations

import os
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any

import gymnasium as gym
import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from rlrun.checks import constructor, env_checks, episode_checks, memory, native_agreement, rules
from rlrun.checks.env_checks import CHECKERS, FAIL, INFO, PASS, SKIP, Result
from rlrun.cli import command_line
from rlrun.config import store
from rlrun.config.errors import Problem, UserError, innermost_outside, report_user_errors
from rlrun.config.keys import override_key
from rlrun.make import models, native, vec_envs
from rlrun.make.gym_make import failure_fix, installed_package
from rlrun.startup import bootstrap

# Hydra reads rlrun's configs here, and a sweep's workers import this module to run its jobs
store.register()

SIM_RENDER_MODES = ("ansi", "human")
CHECKER_PACKAGES = ("gymnasium", "stable_baselines3")  # where the env checkers assert
WIDTH = 100  # notes under a check line are wrapped to this width


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

    The arguments check also builds the model once, as training's preflight does, when the names and
    types are right and the pair fits; budget warnings are notes under a PASS, as training logs them.
    """
    algo_cls = models.algo_class(cfg)
    name = algo_cls.__name__
    fit = rules.fit_problems(cfg, env, algo_cls, models.uses_her(cfg)) + native.problems(cfg)
    fit += memory.buffer_problems(cfg, rules.EnvFacts.of(env), algo_cls)  # the replay buffer fits in memory
    arguments = constructor.algo_problems(cfg, algo_cls)
    if not arguments and not fit:  # SB3 would also reject a pair that does not fit: reported once, above
        arguments = constructor.construction_problems(cfg)
    budget = rules.budget_problems(cfg, algo_cls), rules.budget_warnings(cfg, algo_cls)
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
        if os.environ.get("HYDRA_FULL_ERROR") == "1":  # the full traceback, as for rlrun's other messages
            raise
        at, fix = failure_fix(error, cfg_id(args))
        where = innermost_outside(error.__traceback__) or ""
        if isinstance(error, AssertionError) and installed_package(where) in CHECKER_PACKAGES:
            at = ""  # a checker's own verdict (Gymnasium's or SB3's assertion): its message is the reason
        return [env_checks.fail(name, f"{type(error).__name__}: {error}{at}", fix if at else None)]
    return result if isinstance(result, list) else [result]


def cfg_id(args: tuple[Any, ...]) -> str:
    """The env id of the config among a check's arguments (for the fix of a failure inside the env)."""
    return next((str(arg.env.id) for arg in args if isinstance(arg, DictConfig)), "")


def run_checks(cfg: DictConfig, with_algo: bool) -> list[Result]:
    """Every check in report order; raises :class:`UserError` when the config cannot be built at all."""
    rules.raise_if(rules.range_problems(cfg))
    if cfg.steps < 1:
        raise UserError(f"steps={cfg.steps} must be positive", "set steps to 1 or more (default 1000)")
    steps = cfg.steps
    with closing(vec_envs.make_env(cfg)) as probe:  # a bad id or a wrapper that cannot apply stops here
        rules.raise_if(rules.observation_problems(cfg.env.id, probe.observation_space))  # SB3 cannot train
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
            results += (seeded := _guarded("seeded determinism", env_checks.determinism, cfg, steps))
            results += _guarded("pickling", env_checks.pickling, cfg, steps, seeded[0].status == PASS)
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


def _wrap(text: str, indent: int, more: int) -> str:
    # a long path stays whole (file:line can be copied), even past the width
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=" " * indent,
        subsequent_indent=" " * more,
        break_on_hyphens=False,
        break_long_words=False,
    )


def report(results: list[Result]) -> str:
    """One line per check (wrapped to :data:`WIDTH`), its notes indented under it, and a closing count."""
    lines = []
    for r in results:
        lines.append(_wrap(f"{r.status}  {r.name}" + (f": {r.detail}" if r.detail else ""), 0, 6))
        lines += [_wrap(note, 6, 8) for note in r.notes]
    counts = {s: sum(r.status == s for r in results) for s in (PASS, FAIL, SKIP, INFO, episode_checks.WARN)}
    skipped = f", {counts[episode_checks.WARN]} warned" if counts[episode_checks.WARN] else ""
    skipped += f", {counts[SKIP]} skipped" if counts[SKIP] else ""
    info = f", {counts[INFO]} for information" if counts[INFO] else ""
    return "\n".join([*lines, f"{counts[PASS]} passed, {counts[FAIL]} failed{skipped}{info}"])


def simulate(cfg: DictConfig) -> None:
    """Print ``cfg.sim`` random-action steps: action, reward and flags, then the observation or ANSI frame."""
    rules.raise_if(rules.range_problems(cfg))
    if cfg.sim < 0:
        raise UserError(f"sim={cfg.sim} must be >= 0", "sim=N prints N random-action steps, e.g. sim=20")
    with closing(vec_envs.make_env(cfg)) as probe:
        modes = [mode for mode in probe.metadata.get("render_modes", []) if mode in SIM_RENDER_MODES]
    if cfg.render is not None and cfg.render not in modes:
        offered = ", ".join(modes) or "neither"
        fix = "use " + "".join(f"render={mode}, or " for mode in modes) + "no render to print observations"
        raise UserError(f"{cfg.env.id} cannot show render={cfg.render} here (it offers {offered})", fix)
    with closing(vec_envs.make_env(cfg, render_mode=cfg.render)) as env:
        env.action_space.seed(cfg.seed)
        _print_state(env, cfg, f"reset(seed={cfg.seed})", env.reset(seed=cfg.seed)[0])
        for t in range(1, cfg.sim + 1):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, _ = env.step(action)
            head = f"step {t}  action={env_checks.show(action)}  reward={env_checks.show(float(reward))}"
            _print_state(env, cfg, f"{head}  terminated={terminated}  truncated={truncated}", obs)
            if (terminated or truncated) and t < cfg.sim:
                _print_state(env, cfg, "reset", env.reset()[0])


def _print_state(env: gym.Env, cfg: DictConfig, head: str, obs: Any) -> None:
    print(head)
    print(str(env.render()).rstrip("\n") if cfg.render == "ansi" else f"  observation {env_checks.show(obs)}")


def algo_given(overrides: list[str]) -> bool:
    """Whether the command line chose or changed the algorithm (``algo=...``, ``algo.<key>=...``)."""
    keys = [override_key(override) for override in overrides]
    return any(key == "algo" or key.startswith("algo.") for key in keys)


@hydra.main(config_path="pkg://rlrun.conf", config_name="check", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:
    """Check the env (and algorithm) ``rlrun`` would build for these overrides; exit 1 if a check fails."""
    hydra_cfg = HydraConfig.get()
    choices, with_algo = hydra_cfg.runtime.choices, algo_given(list(hydra_cfg.overrides.task))
    with report_user_errors("rlrun-check"):
        if cfg.render is not None and not cfg.sim:
            raise UserError(f"render={cfg.render} shows a simulated episode", "add sim=N, e.g. sim=20")
        if cfg.sim:
            simulate(cfg)
            return
        results = run_checks(cfg, with_algo)
    algo = f", algo={choices.get('algo')}" if with_algo else ""
    wrappers = f", wrappers=[{','.join(cfg.wrappers)}]" if cfg.wrappers else ""
    print(f"rlrun-check: env={choices.get('env')} ({cfg.env.id}){algo}{wrappers}, seed={cfg.seed}")
    print(report(results))
    if any(r.status == FAIL for r in results):
        sys.exit(1)


@bootstrap.entry
def main() -> None:
    """Console-script entry point: the command line's wrapper names are checked before Hydra composes."""
    with report_user_errors("rlrun-check"):
        command_line.check_wrapper_names(sys.argv[1:], config_name="check")
    _hydra_main()


if __name__ == "__main__":
    main()
