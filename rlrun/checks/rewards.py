"""The reward an env returns, checked before a run creates anything: SB3 trains on one number per step.

A vector of objectives (mo-gymnasium's envs) or an object that is no number fails inside SB3's ``Monitor`` at the
first step of training, in words that blame the algorithm; here it is refused with its shape or type named. The
check reads the reward of one step (:func:`rlrun.make.vec_envs.first_step`) and builds nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.config.errors import Problem

# rlrun's wrappers sit above SB3's Monitor, which already needs one number: the vector is made one below it
VECTOR_FIX = (
    "train on one number per step: register an id of your own whose env returns one (for mo-gymnasium, its "
    "LinearReward wrapper around the env, with one weight per objective) and name its module in env.packages=[...]; "
    "rlrun's wrappers apply after SB3's Monitor, which already needs one number"
)


def _shown(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def reward_problems(env_id: str, reward: Any) -> list[Problem]:
    """A reward that is not one number: numbers in an array of another shape (a vector of objectives), named by
    the shape, or an object that is no number (the env's own bug), named by its type. One number in an array (of
    shape ``()`` or ``(1,)``) is one number."""
    try:
        values = np.asarray(reward)
    except (ValueError, TypeError):  # a ragged sequence
        values = np.asarray(None)
    numeric = values.dtype.kind in "biuf"
    if numeric and values.size == 1:
        return []
    if numeric and values.size > 1:
        return [
            (
                f"{env_id} returns a reward of shape {values.shape} ({_shown(reward)}), not one number: one value "
                "per objective, as mo-gymnasium's envs give; SB3 trains on one number per step",
                VECTOR_FIX,
            )
        ]
    return [
        (
            f"{env_id} returns a reward of type {type(reward).__name__} ({_shown(reward)}), not a number",
            f"make step() of {env_id} return its reward as a float (or an int), as Gymnasium's API asks: a bug of the "
            "env's own code, not of rlrun or a library",
        )
    ]
