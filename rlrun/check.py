"""``rlrun-check`` (``python -m rlrun.check env=X [algo=Y] [wrappers=...]``): find problems before training.

Builds exactly what ``rlrun`` would train (through :mod:`rlrun.build`) and reports each check as PASS, FAIL
or SKIP: Gymnasium's and SB3's env checkers, seeded determinism, a pickle round trip mid-episode, the
goal-env reward contract HER relies on, and a random-action rollout free of NaN and inf. With ``algo`` on
the command line (``algo=...`` or any ``algo.<key>=...``) it also checks the algorithm's arguments, its fit
to the spaces after the wrappers, and the budgets. ``sim=N`` prints a random-action episode step by step
instead (``render=ansi`` prints the frames). Exit status: 0 all passed, 1 a check failed, 2 a user
mistake that stops the checks from running (bad id, bad value). Writes no files.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import re
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from contextlib import closing, redirect_stdout
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import gymnasium as gym
import hydra
import numpy as np
from gymnasium.utils.env_checker import check_env as gym_check_env
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from rlrun import build, validate
from rlrun.errors import UserError, report_user_errors

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
SIM_RENDER_MODES = ("ansi", "human")
WIDTH = 100  # notes under a check line are wrapped to this width
CHECKERS = {"Gymnasium check_env": gym_check_env, "SB3 check_env": sb3_check_env}
# Gymnasium's check_env renders every listed mode, human included: never open a real window.
HEADLESS = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
Step = tuple[str, Any, Any, Any, Any, Any]  # (where, observation, reward, terminated, truncated, info)


@dataclass
class Result:
    """One line of the report, with further lines (warnings, fixes) under it."""

    name: str
    status: str
    detail: str = ""  # the reason of a FAIL or SKIP, or a short note on a PASS
    notes: list[str] = field(default_factory=list)


def _fail(name: str, reason: str, fix: str | None = None) -> Result:
    return Result(name, FAIL, reason, [f"fix: {fix}"] if fix else [])


def _problems(name: str, problems: list[validate.Problem], warned: Sequence[validate.Problem] = ()) -> Result:
    """A check made of :mod:`rlrun.validate` problems: FAIL if any, warnings as notes under a PASS."""
    if len(problems) == 1:
        return _fail(name, *problems[0])
    notes = [line for problem, fix in [*problems, *warned] for line in (problem, f"  fix: {fix}")]
    if problems:
        return Result(name, FAIL, f"{len(problems)} problems", notes)
    return Result(name, PASS, f"{len(warned)} warning(s)" if warned else "", notes)


def _run_checker(name: str, checker: Callable[..., None], env: gym.Env) -> Result:
    """Run an env checker on ``env.unwrapped``: its warnings and printed lines become notes under PASS."""
    detail, printed = "", io.StringIO()
    with mock.patch.dict(os.environ, HEADLESS), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with redirect_stdout(printed):
            try:
                checker(env.unwrapped)
            except gym.error.DependencyNotInstalled as error:  # e.g. pygame, for the render modes
                checker(env.unwrapped, skip_render_check=True)
                detail = f"render check skipped: {error}"
    notes = list(dict.fromkeys(re.sub(r"\x1b\[[0-9;]*m|WARN: ", "", str(w.message)) for w in caught))
    warned = f"{len(notes)} warning(s)" if notes else ""
    notes += [" ".join(printed.getvalue().split())] if printed.getvalue().strip() else []
    return Result(name, PASS, "; ".join(filter(None, [detail, warned])), notes)


def _actions(space: gym.Space, n: int, seed: int) -> list[Any]:
    space.seed(seed)
    return [space.sample() for _ in range(n)]


def _trajectory(env: gym.Env, actions: list[Any], seed: int | None) -> list[Step]:
    """A reset with ``seed`` (none if it is None), then one entry per step and per reset after an episode."""
    out: list[Step] = [] if seed is None else [(f"reset(seed={seed})", env.reset(seed=seed)[0], 0, 0, 0, {})]
    for i, action in enumerate(actions, 1):
        out.append((f"step {i}", *env.step(action)))
        if out[-1][3] or out[-1][4]:
            out.append((f"the reset after step {i}", env.reset()[0], 0, 0, 0, {}))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:  # not numbers
        return bool(a == b)


def _difference(first: list[Step], second: list[Step]) -> str | None:
    """Where two trajectories first differ, and in what; None if they are the same."""
    for (where, *a), (_, *b) in zip(first, second, strict=False):
        for what, x, y in zip(("observations", "rewards", "terminated", "truncated"), a, b, strict=False):
            if not _same(x, y):
                return f"{where}: {what} differ ({_show(x)} vs {_show(y)})"
    return None


def _show(value: Any) -> str:
    """A value on one short line (observations, actions, rewards)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, separator=", ", threshold=12).replace("\n", "")
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def determinism(cfg: DictConfig, steps: int) -> Result:
    """Two copies, same seed, same actions: the same observations, rewards and flags."""
    with closing(build.make_env(cfg)) as first, closing(build.make_env(cfg)) as second:
        actions = _actions(first.action_space, steps, cfg.seed)
        diff = _difference(_trajectory(first, actions, cfg.seed), _trajectory(second, actions, cfg.seed))
    if diff:
        fix = "draw every random number from self.np_random, seeded by super().reset(seed=seed)"
        return _fail("seeded determinism", f"two copies reset with seed={cfg.seed} diverged at {diff}", fix)
    return Result("seeded determinism", PASS, f"{steps} steps, seed={cfg.seed}")


def pickling(cfg: DictConfig, steps: int, compare: bool) -> Result:
    """A pickle round trip mid-episode; the copy must go on exactly like the original (if deterministic)."""
    name, before, after = "pickling", min(steps, 10), min(steps, 50)
    with closing(build.make_env(cfg)) as env:
        actions = _actions(env.action_space, before + after, cfg.seed)
        _trajectory(env, actions[:before], cfg.seed)
        try:
            clone = pickle.loads(pickle.dumps(env))
        except Exception as error:
            fix = "keep only picklable state on the env (no open files, locks or lambdas)"
            return _fail(name, f"round trip after {before} steps: {type(error).__name__}: {error}", fix)
        with closing(clone):
            if not compare:
                return Result(name, PASS, "round trip only (not compared: the env is not deterministic)")
            rest = actions[before:]
            diff = _difference(_trajectory(env, rest, None), _trajectory(clone, rest, None))
    if diff:
        return _fail(name, f"the unpickled copy went on differently: at {diff}", "pickle all of its state")
    return Result(name, PASS, f"round trip after {before} steps, then {after} identical steps")


def goal_rewards(cfg: DictConfig, steps: int) -> Result:
    """HER's contract: ``compute_reward`` on a batch gives one reward per transition, equal to ``step``'s."""
    name, n = "goal env compute_reward", min(steps, 200)
    with closing(build.make_env(cfg)) as env:
        if not validate.is_goal_env(env):
            return Result(name, SKIP, "not a goal env (Dict observation with goals, and compute_reward)")
        trajectory = _trajectory(env, _actions(env.action_space, n, cfg.seed), cfg.seed)
        moves = [step for step in trajectory if step[0].startswith("step")]  # the resets hold no reward
        achieved, desired = (np.stack([m[1][key] for m in moves]) for key in ("achieved_goal", "desired_goal"))
        rewards, infos = np.array([m[2] for m in moves], float), np.array([m[5] for m in moves], object)
        try:
            batch = np.asarray(env.get_wrapper_attr("compute_reward")(achieved, desired, infos), dtype=float)
        except Exception as error:
            fix = "HER calls it with goals of shape (batch, goal_dim): vectorise it"
            return _fail(name, f"on a batch of {n} goals it raised {type(error).__name__}: {error}", fix)
    if batch.shape != (n,):
        fix = "return one reward per transition (reduce over the last axis only)"
        return _fail(name, f"on a batch of {n} goals it returned shape {batch.shape}, not ({n},)", fix)
    bad = np.flatnonzero(~np.isclose(batch, rewards, rtol=1e-5, atol=1e-6, equal_nan=True))
    if bad.size:
        i = int(bad[0])
        reason = f"disagrees with step's reward on {bad.size} of {n} transitions (first: step returned "
        reason += f"{rewards[i]:.4g}, compute_reward {batch[i]:.4g})"
        fix = "compute step's reward with compute_reward(achieved_goal, desired_goal, info); a reward "
        fix += "wrapper (e.g. scale_reward) changes step's reward but not compute_reward's"
        return _fail(name, reason, fix)
    return Result(name, PASS, f"a batch of {n} transitions agrees with step")


def _non_finite(value: Any, name: str) -> str | None:
    """Which part of an observation or reward batch holds NaN or inf, and in which env copy."""
    if isinstance(value, dict):
        return next(filter(None, (_non_finite(v, f"{name}[{k!r}]") for k, v in value.items())), None)
    array = np.asarray(value)
    if array.dtype.kind not in "fc" or np.isfinite(array).all():
        return None
    copy = int(np.argwhere(~np.isfinite(array))[0][0])
    kind = "NaN" if np.isnan(array).any() else "inf"
    return f"{name} contain {kind} (env copy {copy}: {_show(array[copy])})"


def rollout(cfg: DictConfig, steps: int) -> Result:
    """``steps`` random-action steps through the training envs (vectorised, normalised): all finite."""
    with closing(build.make_train_env(cfg)) as venv:
        venv.reset()
        n, episodes = venv.num_envs, 0
        actions = _actions(venv.action_space, math.ceil(steps / n) * n, cfg.seed)
        for t in range(math.ceil(steps / n)):
            obs, rewards, dones, _ = venv.step(np.array(actions[t * n : (t + 1) * n]))
            episodes += int(dones.sum())
            if problem := _non_finite(obs, "observations") or _non_finite(rewards, "rewards"):
                return _fail("random rollout", f"step {t + 1}: {problem}")
    copies = f"{n} env cop{'y' if n == 1 else 'ies'}, {episodes} episodes ended"
    return Result("random rollout", PASS, f"{steps} steps ({copies}), no NaN or inf")


def algo_checks(cfg: DictConfig, env: gym.Env) -> list[Result]:
    """The algorithm's arguments, its fit to the spaces after the wrappers, and the budgets."""
    algo_cls = build.algo_class(cfg)
    name = algo_cls.__name__
    fit = validate.fit_problems(cfg, env, algo_cls, build.uses_her(cfg))
    budget = validate.budget_problems(cfg, algo_cls), validate.budget_warnings(cfg, algo_cls)
    return [
        _problems(f"{name} arguments", validate.algo_problems(cfg, algo_cls)),
        _problems(f"{name} fits {cfg.env.id}", fit),
        _problems("hyperparameters", *budget),
    ]


def _guarded(name: str, check: Callable[..., Result | list[Result]], *args: Any) -> list[Result]:
    """Run ``check(*args)``; an exception from the env is that check's FAIL, not a traceback."""
    try:
        result = check(*args)
    except UserError:
        raise
    except Exception as error:
        return [_fail(name, f"{type(error).__name__}: {error}")]
    return result if isinstance(result, list) else [result]


def run_checks(cfg: DictConfig, with_algo: bool) -> list[Result]:
    """Every check in report order; raises :class:`UserError` when the config cannot be built at all."""
    validate.raise_if(validate.range_problems(cfg))
    if cfg.steps < 1:
        raise UserError(f"steps={cfg.steps} must be positive", "set steps to 1 or more (default 1000)")
    steps = cfg.steps
    with closing(build.make_env(cfg)) as probe:  # a bad id or a wrapper that cannot apply stops here
        results: list[Result] = []
        for name, checker in CHECKERS.items():
            results += _guarded(name, _run_checker, name, checker, probe)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the checkers above already reported what the env warns about
            results += (seeded := _guarded("seeded determinism", determinism, cfg, steps))
            results += _guarded("pickling", pickling, cfg, steps, seeded[0].status == PASS)
            results += _guarded("goal env compute_reward", goal_rewards, cfg, steps)
            if with_algo:
                results += _guarded("algorithm", algo_checks, cfg, probe)
            else:
                results.append(Result("algorithm", SKIP, "no algo= on the command line (e.g. add algo=ppo)"))
            results += _guarded("random rollout", rollout, cfg, steps)
    return results


def _wrap(text: str, indent: int, more: int) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * more, break_on_hyphens=False)


def report(results: list[Result]) -> str:
    """One line per check (wrapped to :data:`WIDTH`), its notes indented under it, and a closing count."""
    lines = []
    for r in results:
        lines.append(_wrap(f"{r.status}  {r.name}" + (f": {r.detail}" if r.detail else ""), 0, 6))
        lines += [_wrap(note, 6, 8) for note in r.notes]
    counts = {s: sum(r.status == s for r in results) for s in (PASS, FAIL, SKIP)}
    skipped = f", {counts[SKIP]} skipped" if counts[SKIP] else ""
    return "\n".join([*lines, f"{counts[PASS]} passed, {counts[FAIL]} failed{skipped}"])


def simulate(cfg: DictConfig) -> None:
    """Print ``cfg.sim`` random-action steps: action, reward and flags, then the observation or ANSI frame."""
    validate.raise_if(validate.range_problems(cfg))
    if cfg.sim < 0:
        raise UserError(f"sim={cfg.sim} must be >= 0", "sim=N prints N random-action steps, e.g. sim=20")
    with closing(build.make_env(cfg)) as probe:
        modes = [mode for mode in probe.metadata.get("render_modes", []) if mode in SIM_RENDER_MODES]
    if cfg.render is not None and cfg.render not in modes:
        offered = ", ".join(modes) or "neither"
        fix = "use " + "".join(f"render={mode}, or " for mode in modes) + "no render to print observations"
        raise UserError(f"{cfg.env.id} cannot show render={cfg.render} here (it offers {offered})", fix)
    with closing(build.make_env(cfg, render_mode=cfg.render)) as env:
        env.action_space.seed(cfg.seed)
        _print_state(env, cfg, f"reset(seed={cfg.seed})", env.reset(seed=cfg.seed)[0])
        for t in range(1, cfg.sim + 1):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, _ = env.step(action)
            head = f"step {t}  action={_show(action)}  reward={_show(float(reward))}"
            _print_state(env, cfg, f"{head}  terminated={terminated}  truncated={truncated}", obs)
            if (terminated or truncated) and t < cfg.sim:
                _print_state(env, cfg, "reset", env.reset()[0])


def _print_state(env: gym.Env, cfg: DictConfig, head: str, obs: Any) -> None:
    print(head)
    print(str(env.render()).rstrip("\n") if cfg.render == "ansi" else f"  observation {_show(obs)}")


def algo_given(overrides: list[str]) -> bool:
    """Whether the command line chose or changed the algorithm (``algo=...``, ``algo.<key>=...``)."""
    keys = [override.lstrip("+~").split("=")[0] for override in overrides]
    return any(key == "algo" or key.startswith("algo.") for key in keys)


@hydra.main(config_path="pkg://rlrun.conf", config_name="check", version_base="1.3")
def main(cfg: DictConfig) -> None:
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


if __name__ == "__main__":
    main()
