"""A run's resume mode (run.json's ``resume_mode``, DESIGN.md), decided from a real round trip of its env stack.

``exact``: a snapshot holds the envs themselves, and a resume continues their episodes in flight bit for bit.
``restart_episodes``: a snapshot holds everything else (model, replay buffer, normalisation statistics, counters,
random generators) and a resume rebuilds the env stack from the config, so the episodes in flight start over.

The round trip is what a snapshot does to an env copy built as training builds it (``gym.make`` -> ``Monitor``
-> the family's and the user's wrappers): its ``spec`` read (wrappers cache it, and a spec whose entry point is a
local function does not pickle), :data:`STEPS_BEFORE` steps into a seeded episode, pickled, unpickled; then both
copies take the same :data:`STEPS_AFTER` actions, for at most :data:`SECONDS` seconds (measured between steps), and
must give the same observations, rewards and ends (and the same observations after a reset). ``exact`` only if
they do: a stack that does not pickle, a copy that cannot step (state that lives outside Python, such as a
physics server), a copy that is a new env (MuJoCo's envs pickle their constructor arguments only, Gymnasium's
``EzPickle``), a check that raises or runs out of time all mean ``restart_episodes``, with the reason. Deciding
never fails a run.
"""

from __future__ import annotations

import contextlib
import pickle
import random
import time
import warnings
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from omegaconf import DictConfig

from rlrun.checks.env_checks import FAIL, INFO, PASS, Result
from rlrun.make import vec_envs

EXACT, RESTART_EPISODES = "exact", "restart_episodes"
MODES = (EXACT, RESTART_EPISODES)
STEPS_BEFORE = 10  # steps into an episode before the copy is taken
STEPS_AFTER = 50  # steps both copies then take with the same actions
SECONDS = 10.0  # the most the steps may take together (a slow simulator: restart_episodes)
# What each mode keeps (docs/runs.md has the same table).
KEPT = {
    EXACT: "snapshots hold the envs too: a resume continues the episodes in flight bit for bit",
    RESTART_EPISODES: "snapshots hold the model, replay buffer, normalisation statistics, counters and random "
    "generators; a resume rebuilds the envs from the config and the episodes in flight start over",
}


@dataclass(frozen=True)
class ResumeMode:
    """A run's resume mode and why it was chosen."""

    mode: str
    reason: str

    @property
    def exact(self) -> bool:
        """Whether snapshots hold the envs themselves."""
        return self.mode == EXACT


def decide(cfg: DictConfig) -> ResumeMode:
    """The resume mode of a run of ``cfg``, from a round trip of one env copy (never raises an ``Exception``).

    Python's and numpy's global generators are left as they were: an env that draws from them does not change
    the run it is checked for."""
    python, numpy = random.getstate(), np.random.get_state()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run's own env building reports what the env warns about
            return _round_trip(cfg)
    except Exception as error:
        return ResumeMode(RESTART_EPISODES, f"its round trip raised {_described(error)}")
    finally:
        random.setstate(python)
        np.random.set_state(numpy)


def recorded(record: dict[str, Any]) -> ResumeMode:
    """The mode a run recorded in run.json; a run written before resume modes existed resumed exactly."""
    mode = record.get("resume_mode")
    if mode in MODES:
        return ResumeMode(str(mode), "as recorded in run.json")
    return ResumeMode(EXACT, "a run recorded before resume modes, whose snapshots hold its envs")


def resume_mode_line(mode: ResumeMode) -> str:
    """The line a run starts with: its resume mode and why."""
    after = "" if mode.exact else "; a resume= restarts the episodes in flight (docs/runs.md)"
    return f"resume mode: {mode.mode}, {mode.reason}{after}"


def check(cfg: DictConfig) -> Result:
    """``rlrun-check``'s line: the mode a run of ``cfg`` gets and why (PASS for ``exact``; ``restart_episodes`` is
    information, never a failure: such a run stops and resumes cleanly, its episodes in flight start over)."""
    mode = decide(cfg)
    notes = (
        []
        if mode.exact
        else [
            KEPT[mode.mode],
            "for an exact resume, the env stack must pickle after env.spec is read and its unpickled copy must "
            "continue the episode in progress (docs/runs.md, Resume modes)",
        ]
    )
    return Result("resume mode", PASS if mode.exact else INFO, f"{mode.mode}: {mode.reason}", notes)


def with_determinism(mode: Result, determinism: Result) -> Result:
    """``rlrun-check``'s resume-mode line once the seeded-determinism line is known: ``exact`` only as far as a
    round trip can see when two copies of the env did not repeat each other. The round trip compares a copy with
    its original in one process, so it cannot see state kept outside the env's instance (a class attribute, a
    module's global, a file) which the determinism check finds: the resume's episodes may then not repeat."""
    if mode.status != PASS or determinism.status != FAIL:
        return mode
    note = (
        "the round trip cannot see state kept outside the env's instance (a class attribute, a module's global, a "
        "file), which a snapshot does not hold: seeded determinism failed above, so a resume may not repeat the "
        "episodes of a run never stopped; fix that first (draw from self.np_random, keep state in the instance)"
    )
    return Result(mode.name, INFO, f"{mode.detail}; exact only as far as the round trip sees", [note, *mode.notes])


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


def _described(error: BaseException) -> str:
    """The error's type and, where it has one, its message (an ``assert`` may have none)."""
    return f"{type(error).__name__}: {_short(error)}" if str(error).strip() else type(error).__name__


def _round_trip(cfg: DictConfig) -> ResumeMode:
    deadline = time.monotonic() + SECONDS
    env = vec_envs.make_env(cfg)
    try:
        _ = env.spec  # what training reads before any snapshot: wrappers cache it
        env.action_space.seed(cfg.seed)
        actions = [env.action_space.sample() for _ in range(STEPS_BEFORE + STEPS_AFTER)]
        env.reset(seed=cfg.seed)
        for action in actions[:STEPS_BEFORE]:
            if any(env.step(action)[2:4]):
                env.reset()
        try:
            pickled = pickle.dumps(env)
        except Exception as error:
            return ResumeMode(RESTART_EPISODES, f"the env stack does not pickle: {_described(error)}")
        clone = pickle.loads(pickled)
        try:
            return _compare(env, clone, actions[STEPS_BEFORE:], deadline)
        finally:
            _close(clone)
    finally:
        _close(env)


def _compare(env: gym.Env, clone: gym.Env, actions: list[Any], deadline: float) -> ResumeMode:
    """Step ``env`` and its unpickled ``clone`` with the same actions; exact only if they agree throughout."""
    for i, action in enumerate(actions, 1):
        try:
            theirs = clone.step(action)
        except Exception as error:
            return ResumeMode(
                RESTART_EPISODES,
                f"the unpickled env cannot step ({_described(error)}): it is not the episode in progress (its "
                "state lives outside what pickle copies, or it pickles its constructor arguments only)",
            )
        ours = env.step(action)
        for what, a, b in zip(("observations", "rewards", "terminated", "truncated"), ours, theirs, strict=False):
            if not _same(a, b):
                return ResumeMode(
                    RESTART_EPISODES,
                    f"the unpickled env went on differently, {what} differ {i} step(s) after the copy: it is not "
                    "the episode in progress, as with envs that pickle their constructor arguments only (MuJoCo's)",
                )
        if (ours[2] or ours[3]) and not _same(env.reset()[0], clone.reset()[0]):
            return ResumeMode(RESTART_EPISODES, f"the unpickled env reset differently after step {i}")
        if time.monotonic() > deadline:
            return ResumeMode(
                RESTART_EPISODES, f"its round trip took longer than {SECONDS:g} s, {i} of {len(actions)} steps"
            )
    return ResumeMode(
        EXACT,
        f"the env stack round-trips: pickled {STEPS_BEFORE} steps into an episode, its copy took the same "
        f"{len(actions)} steps as the original",
    )


def _same(a: Any, b: Any) -> bool:
    """Equal observations, rewards or flags (dicts and tuples of arrays included, NaN equal to NaN)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:  # not numbers
        return bool(a == b)


def _close(env: gym.Env) -> None:
    with contextlib.suppress(Exception):  # an env that cannot close twice, or whose copy is not connected
        env.close()
