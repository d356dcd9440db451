"""The plain Stable-Baselines3 script rlrun's overhead is measured against:
``python -m benchmarks.speed.plain_sb3 SPEC``.

SPEC is a JSON file the overhead benchmark writes from rlrun's composed config (env id, copies, seed,
threads, steps, the algorithm's resolved arguments), so both sides train exactly the same thing. This
script is what a user would write by hand: make the vec env, build the model, learn. It imports no rlrun
and no Hydra; ``_target_`` nodes (schedules, noise) are built with importlib.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def _build(node: Any) -> Any:
    """Dicts with ``_target_`` become the object they name (called with the other keys), recursively."""
    if isinstance(node, dict):
        built = {key: _build(value) for key, value in node.items() if key != "_target_"}
        if "_target_" in node:
            module, _, name = node["_target_"].rpartition(".")
            return getattr(importlib.import_module(module), name)(**built)
        return built
    if isinstance(node, list):
        return [_build(value) for value in node]
    return node


def main() -> None:
    """Train as SPEC says; nothing else (no evaluation, no snapshots, no logs)."""
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    import gymnasium as gym
    import rlrun.envs  # noqa: F401  (registers rlrun's envs, as a user's own package would)
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(spec["torch_threads"])
    venv = make_vec_env(
        spec["env_id"],
        n_envs=spec["n_envs"],
        seed=spec["seed"],
        env_kwargs={
            **spec["env_kwargs"],
            **({"max_episode_steps": spec["max_episode_steps"]} if spec["max_episode_steps"] else {}),
        },
    )
    if spec["normalize"]["obs"] or spec["normalize"]["reward"]:
        venv = VecNormalize(
            venv,
            norm_obs=spec["normalize"]["obs"],
            norm_reward=spec["normalize"]["reward"],
            gamma=spec["algo"].get("gamma", 0.99),
        )
    algo = dict(spec["algo"])
    module, _, name = algo.pop("_target_").rpartition(".")
    policy = algo.pop("policy", None) or (
        "MultiInputPolicy" if isinstance(venv.observation_space, gym.spaces.Dict) else "MlpPolicy"
    )
    model = getattr(importlib.import_module(module), name)(
        policy, venv, seed=spec["seed"], device="cpu", verbose=0, **_build(algo)
    )
    model.learn(spec["total_timesteps"])


if __name__ == "__main__":
    main()
