"""The env checks of ``rlrun-check``: each builds the env as ``rlrun`` would and returns one :class:`Result`.

Gymnasium's and SB3's env checkers on the env as it trains (after the family's and the user's wrappers; the raw
env's own problems are reported apart, for information), its render modes, seeded determinism, the goal-env
reward contract HER relies on, and a random-action rollout free of NaN and inf (the pickle round trip that decides
the resume mode is :mod:`rlrun.checks.resume_mode`'s). An env that raises is the caller's business
(:mod:`rlrun.cli.check` turns it into that check's FAIL).

No check opens a window: Gymnasium's checker runs without its render checks, which :func:`render_modes` does
itself, mode by mode, leaving out ``human`` where no display is available (MuJoCo's window would abort the
process) and reporting a mode that fails to render as information: training never renders.
"""

from __future__ import annotations

import copy
import functools
import io
import math
import os
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.utils.passive_env_checker import env_render_passive_checker
from omegaconf import DictConfig, open_dict
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from rlrun.checks import rules
from rlrun.make import vec_envs
from rlrun.make.gym_make import failure_fix
from rlrun.startup.headless import display_available

PASS, FAIL, SKIP, INFO = "PASS", "FAIL", "SKIP", "INFO"  # INFO: reported, never a failure
# The fix of a goal env whose step reward is not compute_reward's: rlrun's goal-env check and SB3's check_env
# (whose assertion says "The reward was not computed with compute_reward()") both give it.
GOAL_REWARD_FIX = (
    "compute step's reward with compute_reward(achieved_goal, desired_goal, info); a reward wrapper (e.g. "
    "scale_reward) changes step's reward but not compute_reward's"
)
# Both checkers without their render checks (SB3's skips them by default): render_modes does them headless.
CHECKERS: dict[str, Callable[..., None]] = {
    "Gymnasium check_env": functools.partial(gym_check_env, skip_render_check=True, skip_close_check=True),
    "SB3 check_env": lambda env: check_with_sb3(env),
}
# Gymnasium's note that it was given a wrapped env: rlrun checks the env as it trains, on purpose.
WRAPPED_NOTE = "is different from the unwrapped version"
# pygame renders into no window and plays no sound, whatever the mode.
HEADLESS = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
Step = tuple[str, Any, Any, Any, Any, Any]  # (where, observation, reward, terminated, truncated, info)


class SB3View(gym.Wrapper):
    """The env as it trains, seen as SB3's VecEnv sees it, for SB3's checker: a numpy scalar reward is a float (the
    VecEnv's buffer casts it; the checker asserts a Python float, which Gymnasium-Robotics' envs do not return), and
    an env that is no goal env (:func:`rlrun.checks.rules.is_goal_env`) is not taken for one because its raw env
    has a method named ``compute_reward`` (Meta-World's takes an action and an observation): SB3's checker asks
    only that, of ``env.unwrapped``, which this view answers with itself. What it changed is noted."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.noted: list[str] = []
        if callable(getattr(env.unwrapped, "compute_reward", None)) and not isinstance(self, GoalSB3View):
            self.noted.append(
                "the env has a compute_reward method but is no goal env (a Dict observation with observation, "
                "achieved_goal and desired_goal): SB3's checker, which takes every env with that method for a goal "
                "env, checked it as a plain env"
            )

    @property
    def unwrapped(self) -> gym.Env:
        """This view, for SB3's checker, which reads ``env.unwrapped`` only to ask whether it has ``compute_reward``
        (its goal-env checks); a :class:`GoalSB3View` gives the raw env."""
        return self

    def step(self, action: Any) -> Any:
        """The env's step, with a numpy scalar reward as a float (noted once)."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if isinstance(reward, np.generic) and not self.noted:
            self.noted.append(
                f"step() returns its reward as numpy.{type(reward).__name__}, not a Python float: SB3's VecEnv "
                "casts it, so training is unaffected (the checker was given float(reward))"
            )
        return obs, float(reward) if isinstance(reward, np.generic) else reward, terminated, truncated, info


class GoalSB3View(SB3View):
    """:class:`SB3View` of a goal env: SB3's checker sees the raw env, and ``compute_reward`` is reached through the
    wrappers (``get_wrapper_attr``, as HER does; the checker calls ``env.compute_reward``, which Gymnasium's
    wrappers no longer forward)."""

    @property
    def unwrapped(self) -> gym.Env:
        """The raw env."""
        return self.env.unwrapped

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        """The wrapped env's ``compute_reward``, wherever it is in the stack."""
        return self.env.get_wrapper_attr("compute_reward")(achieved_goal, desired_goal, info)


def check_with_sb3(env: gym.Env) -> None:
    """SB3's checker on :class:`SB3View` of ``env`` (:class:`GoalSB3View` of a goal env); what the view changed is
    warned, so it is noted."""
    view = (GoalSB3View if rules.is_goal_env(env) else SB3View)(env)
    sb3_check_env(view)
    for note in view.noted:
        warnings.warn(note, stacklevel=2)


@dataclass
class Result:
    """One line of the report, with further lines (warnings, fixes) under it."""

    name: str
    status: str
    detail: str = ""  # the reason of a FAIL or SKIP, or a short note on a PASS
    notes: list[str] = field(default_factory=list)


def fail(name: str, reason: str, fix: str | None = None) -> Result:
    """A FAIL line with its reason, and the fix as a note under it."""
    return Result(name, FAIL, reason, [f"fix: {fix}"] if fix else [])


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables inside the block, and restore them (or their absence) afterwards."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_checker(name: str, checker: Callable[..., None], env: gym.Env) -> Result:
    """Run an env checker on ``env`` (the env as it trains): its warnings and printed lines become notes under
    PASS; what it raises is the caller's FAIL."""
    printed = io.StringIO()
    with environment(HEADLESS), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with redirect_stdout(printed):
            checker(env)
    notes = [note for note in _warned(caught) if WRAPPED_NOTE not in note]
    warned = f"{len(notes)} warning(s)" if notes else ""
    notes += [" ".join(printed.getvalue().split())] if printed.getvalue().strip() else []
    return Result(name, PASS, warned, notes)


def _warned(caught: list[warnings.WarningMessage]) -> list[str]:
    return list(dict.fromkeys(re.sub(r"\x1b\[[0-9;]*m|WARN: ", "", str(w.message)) for w in caught))


def render_modes(cfg: DictConfig, modes: list[str]) -> tuple[str, list[str]]:
    """Gymnasium's render and close checks, headless: each of ``modes`` (the env's ``metadata["render_modes"]``)
    rendered once after a reset, but never ``human`` without a display; then ``close`` twice. Returns a detail and
    notes: a mode that fails is information, since training never renders."""
    done: list[str] = []
    notes: list[str] = []
    skipped: list[str] = []
    for mode in modes:
        if mode == "human" and not display_available():
            skipped.append("human not rendered: no display here (DISPLAY and WAYLAND_DISPLAY are unset)")
            continue
        try:
            with environment(HEADLESS), warnings.catch_warnings(), closing(vec_envs.make_env(cfg, mode)) as env:
                warnings.simplefilter("ignore")
                env.reset(seed=cfg.seed)
                env_render_passive_checker(env)
            done.append(mode)
        except gym.error.DependencyNotInstalled as error:  # e.g. pygame, for the render modes
            skipped.append(f"render check skipped: {error}")
        except Exception as error:
            at, _ = failure_fix(error, cfg.env.id)
            notes.append(
                f"for information: render_mode={mode} failed ({type(error).__name__}: {error}{at}); training and "
                "evaluation never render, videos and sim=N with it would fail"
            )
    env = vec_envs.make_env(cfg)
    env.close()
    try:
        env.close()
    except Exception as error:
        notes.append(f"calling env.close() on a closed env should be allowed, but it raised {error!r}")
    rendered = f"rendered {', '.join(done)}" if done else ""
    return "; ".join(filter(None, [rendered, *skipped])), notes


def by_family_design(cfg: DictConfig, result: Result, checker: Callable[..., None], probe: gym.Env) -> Result:
    """A checker's FAIL on the env as it trains, as information when the family's own wrappers cause it (the raw
    env passes, and so does the env without the user's wrappers fail the same way): SB3's ``AtariWrapper`` ends
    an episode at a lost life and continues the game at the next ``reset``, which Gymnasium's seeded-reset check
    takes for non-determinism. Training uses these wrappers as RL Zoo does; a FAIL the user's wrappers cause stays."""
    family = cfg.env.get("wrappers")
    if result.status != FAIL or not family:
        return result
    if cfg.wrappers:  # the env with the family's wrappers only must fail the same way
        alone = copy.deepcopy(cfg)
        with open_dict(alone):
            alone.wrappers = {}
        with closing(vec_envs.make_env(alone)) as env:
            try:
                run_checker(result.name, checker, env)
                return result
            except Exception as error:
                if f"{type(error).__name__}: {error}" != result.detail:
                    return result
    try:
        run_checker(result.name, checker, probe.unwrapped)
    except Exception:
        return result  # the raw env fails too: the env's own problem
    names = ", ".join(f"env.wrappers.{name}" for name in family)
    note = (
        f"the raw env passes: the family's wrappers ({names}) cause it, as they are meant to (e.g. SB3's "
        "AtariWrapper ends an episode at a lost life and continues the game at the next reset); rlrun trains with "
        "them as RL Zoo does"
    )
    return Result(result.name, INFO, result.detail, [note, *result.notes])


def raw_env_problems(env: gym.Env, reported: list[Result]) -> Result | None:
    """The checkers on the raw env (``env.unwrapped``, before any wrapper), for information: what the wrappers
    hide (MiniGrid's text ``mission``, which an observation wrapper removes) is no failure of the env that
    trains. None when they find nothing beyond the notes already ``reported``."""
    known = {note for result in reported for note in [result.detail, *result.notes]}
    notes: list[str] = []
    for name, checker in CHECKERS.items():
        try:
            result = run_checker(name, checker, env.unwrapped)
        except Exception as error:
            notes.append(f"{name}: {type(error).__name__}: {' '.join(str(error).split())}")
            continue
        notes += [f"{name}: {note}" for note in result.notes if note not in known]
    if not notes:
        return None
    return Result("the raw env, before the wrappers", INFO, "for information (the wrapped env is checked above)", notes)


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
                return f"{where}: {what} differ ({show(x)} vs {show(y)})"
    return None


def show(value: Any) -> str:
    """A value on one short line (observations, actions, rewards), for reports and ``sim=``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, separator=", ", threshold=12).replace("\n", "")
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def determinism(cfg: DictConfig, steps: int) -> Result:
    """Two copies, same seed, same actions: the same observations, rewards and flags."""
    with closing(vec_envs.make_env(cfg)) as first, closing(vec_envs.make_env(cfg)) as second:
        actions = _actions(first.action_space, steps, cfg.seed)
        diff = _difference(_trajectory(first, actions, cfg.seed), _trajectory(second, actions, cfg.seed))
    if diff:
        fix = "draw every random number from self.np_random, seeded by super().reset(seed=seed)"
        return fail("seeded determinism", f"two copies reset with seed={cfg.seed} diverged at {diff}", fix)
    return Result("seeded determinism", PASS, f"{steps} steps, seed={cfg.seed}")


def goal_rewards(cfg: DictConfig, steps: int) -> Result:
    """HER's contract: ``compute_reward`` on a batch gives one reward per transition, equal to ``step``'s."""
    name, n = "goal env compute_reward", min(steps, 200)
    with closing(vec_envs.make_env(cfg)) as env:
        if not rules.is_goal_env(env):
            return Result(name, SKIP, "not a goal env (Dict observation with goals, and compute_reward)")
        trajectory = _trajectory(env, _actions(env.action_space, n, cfg.seed), cfg.seed)
        moves = [step for step in trajectory if step[0].startswith("step")]  # the resets hold no reward
        achieved, desired = (np.stack([m[1][key] for m in moves]) for key in ("achieved_goal", "desired_goal"))
        rewards, infos = np.array([m[2] for m in moves], float), np.array([m[5] for m in moves], object)
        try:
            batch = np.asarray(env.get_wrapper_attr("compute_reward")(achieved, desired, infos), dtype=float)
        except Exception as error:
            fix = "HER calls it with goals of shape (batch, goal_dim): vectorise it"
            return fail(name, f"on a batch of {n} goals it raised {type(error).__name__}: {error}", fix)
    if batch.shape != (n,):
        fix = "return one reward per transition (reduce over the last axis only)"
        return fail(name, f"on a batch of {n} goals it returned shape {batch.shape}, not ({n},)", fix)
    bad = np.flatnonzero(~np.isclose(batch, rewards, rtol=1e-5, atol=1e-6, equal_nan=True))
    if bad.size:
        i = int(bad[0])
        reason = f"disagrees with step's reward on {bad.size} of {n} transitions (first: step returned "
        reason += f"{rewards[i]:.4g}, compute_reward {batch[i]:.4g})"
        return fail(name, reason + _penalty_note(rewards[bad] - batch[bad]), GOAL_REWARD_FIX)
    return Result(name, PASS, f"a batch of {n} transitions agrees with step")


def _penalty_note(differences: np.ndarray) -> str:
    """When step's reward is always below compute_reward's, it looks like a penalty the env adds on purpose (an
    action or time cost): say so, and what it means for HER (its relabelled rewards leave the penalty out)."""
    if not np.all(differences < 0):
        return ""
    low, high = float(-differences.max()), float(-differences.min())
    return (
        f"; step's reward is lower on every one (by {low:.4g} to {high:.4g}): "
        "this looks like a penalty the env adds on purpose (an action or time cost), which HER's relabelled "
        "rewards leave out; if so, the env needs no change, and the run learns from goal rewards without it"
    )


def _non_finite(value: Any, name: str) -> str | None:
    """Which part of an observation or reward batch holds NaN or inf, and in which env copy."""
    if isinstance(value, dict):
        return next(filter(None, (_non_finite(v, f"{name}[{k!r}]") for k, v in value.items())), None)
    array = np.asarray(value)
    if array.dtype.kind not in "fc" or np.isfinite(array).all():
        return None
    copy = int(np.argwhere(~np.isfinite(array))[0][0])
    kind = "NaN" if np.isnan(array).any() else "inf"
    return f"{name} contain {kind} (env copy {copy}: {show(array[copy])})"


def rollout(cfg: DictConfig, steps: int) -> Result:
    """``steps`` random-action steps through the training envs (vectorised, normalised): all finite."""
    with closing(vec_envs.make_train_env(cfg)) as venv:
        venv.reset()
        n, episodes = venv.num_envs, 0
        actions = _actions(venv.action_space, math.ceil(steps / n) * n, cfg.seed)
        for t in range(math.ceil(steps / n)):
            obs, rewards, dones, _ = venv.step(np.array(actions[t * n : (t + 1) * n]))
            episodes += int(dones.sum())
            if problem := _non_finite(obs, "observations") or _non_finite(rewards, "rewards"):
                return fail("random rollout", f"step {t + 1}: {problem}")
    copies = f"{n} env cop{'y' if n == 1 else 'ies'}, {episodes} episodes ended"
    return Result("random rollout", PASS, f"{steps} steps ({copies}), no NaN or inf")
