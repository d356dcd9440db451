"""Gymnasium environments of rlrun, registered under the namespace ``rlrun`` on import.

Usable without rlrun (only gymnasium and numpy are imported; pygame only for ``render_mode="human"``):

>>> import gymnasium as gym
>>> import rlrun.envs
>>> env = gym.make("rlrun/GridWorld-v0")
>>> obs, info = env.reset(seed=0)
>>> sorted(obs)
['agent', 'target']
>>> env.spec.max_episode_steps, env.spec.reward_threshold
(50, 0.9)
>>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
>>> "is_success" in info
True

or, without importing the package first, ``gym.make("rlrun.envs:rlrun/GridWorld-v0")``. Episode limits are set
here, at registration (``max_episode_steps``), never inside the envs. Only GridWorld declares a
``reward_threshold``: its return is 1 exactly when the episode succeeds; the returns of the others depend on
where an episode starts, and every env reports ``info["is_success"]``, the measure to use for them.
"""

from gymnasium.envs.registration import register, registry

from .gridworld import GridWorldEnv
from .point import PointEnv
from .point_goal import PointGoalEnv
from .room import RoomToyEnv
from .wrappers import RelativePosition, ScaleReward

__all__ = [
    "ENV_IDS",
    "GridWorldEnv",
    "PointEnv",
    "PointGoalEnv",
    "RelativePosition",
    "RoomToyEnv",
    "ScaleReward",
]

# id -> (entry point, max_episode_steps, reward_threshold)
_REGISTRATIONS: dict[str, tuple[str, int, float | None]] = {
    "rlrun/PointEnv-v0": ("rlrun.envs.point:PointEnv", 100, None),
    "rlrun/GridWorld-v0": ("rlrun.envs.gridworld:GridWorldEnv", 50, 0.9),
    "rlrun/PointGoal-v0": ("rlrun.envs.point_goal:PointGoalEnv", 50, None),
    "rlrun/RoomToy-v0": ("rlrun.envs.room:RoomToyEnv", 100, None),
}

ENV_IDS: tuple[str, ...] = tuple(_REGISTRATIONS)

for _env_id, (_entry_point, _max_episode_steps, _reward_threshold) in _REGISTRATIONS.items():
    # Skipping known ids keeps a second import (e.g. importlib.reload, or "rlrun.envs:" in gym.make) free of
    # Gymnasium's "Overriding environment" warning.
    if _env_id not in registry:
        register(
            id=_env_id,
            entry_point=_entry_point,
            max_episode_steps=_max_episode_steps,
            reward_threshold=_reward_threshold,
        )
