"""Evaluation never waits for an episode that does not end.

An env registered without a time limit (``max_episode_steps``), and keeping none itself (as the ALE's frame limit
and MiniGrid's ``max_steps`` are), may never end an episode: a board game where an
illegal move changes nothing loops for ever under a deterministic policy. Evaluation copies of such an env are
capped at :data:`EVAL_MAX_EPISODE_STEPS` steps. An episode cut there ends truncated, as Gymnasium's ``TimeLimit``
ends it, and carries ``info["capped"]`` so evaluation counts it and says so where the results are: each evaluation's
line, ``eval.csv``'s ``capped`` column, ``run.json``'s ``final.capped`` and TensorBoard's ``eval/capped_episodes``;
the first cut episode is warned with its fix, ``env.max_episode_steps`` (the limit for training and evaluation
alike). Nothing is warned where no episode is cut: most envs without a registered limit end their episodes
themselves (dm_control's, Blackjack). Training copies are not capped: the run's budget bounds them.
"""

from __future__ import annotations

import sys
from typing import Any, SupportsFloat

import gymnasium as gym

# Steps after which evaluation ends an episode of an env that declares no time limit (Gymnasium's usual limit).
EVAL_MAX_EPISODE_STEPS = 1000
# The info key marking an episode that evaluation cut at EVAL_MAX_EPISODE_STEPS.
CAPPED = "capped"


class CapEpisode(gym.Wrapper):
    """Ends an episode, truncated, after ``max_steps`` steps, as Gymnasium's ``TimeLimit`` does, and marks the
    step where it cut the episode (``info["capped"]``)."""

    def __init__(self, env: gym.Env, max_steps: int) -> None:
        super().__init__(env)
        self.max_steps = max_steps
        self.steps = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """The env's reset; the step count starts again."""
        self.steps = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """The env's step; truncated at the cap unless the env ended the episode itself."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        if self.steps >= self.max_steps and not (terminated or truncated):
            truncated, info = True, {**info, CAPPED: True}
        return obs, reward, terminated, truncated, info


def time_limit(env: gym.Env) -> str | None:
    """The limit at which ``env`` (as ``gym.make`` made it) ends its episodes, in words, or ``None`` for none: the
    step limit of its registration or config, else a limit the env keeps itself (the ALE's
    ``max_num_frames_per_episode``, MiniGrid's ``max_steps``)."""
    if env.spec is not None and env.spec.max_episode_steps is not None:
        return f"{env.spec.max_episode_steps} steps"
    unwrapped = env.unwrapped
    ale_env = sys.modules.get("ale_py.env")  # imported only where an ALE env was made
    if ale_env is not None and isinstance(unwrapped, ale_env.AtariEnv):
        frames = int(unwrapped.ale.getInt("max_num_frames_per_episode"))  # 0: the game alone ends an episode
        return f"{frames} frames (the ALE's max_num_frames_per_episode)" if frames > 0 else None
    minigrid_env = sys.modules.get("minigrid.minigrid_env")
    if minigrid_env is not None and isinstance(unwrapped, minigrid_env.MiniGridEnv):
        return f"{unwrapped.max_steps} steps (MiniGrid's max_steps)"
    return None


def has_time_limit(env: gym.Env) -> bool:
    """Whether ``env`` (as ``gym.make`` made it) ends its episodes at a limit (:func:`time_limit`)."""
    return time_limit(env) is not None


def capped_for_evaluation(env: gym.Env) -> gym.Env:
    """``env`` itself when it has a time limit, else under :class:`CapEpisode`."""
    return env if has_time_limit(env) else CapEpisode(env, EVAL_MAX_EPISODE_STEPS)
