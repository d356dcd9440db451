"""Checks shared by the env tests: a batched env steps exactly as DummyVecEnv over gym.make does."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_same_obs(a: Any, b: Any) -> None:
    """Two observations (arrays, or dicts of arrays in the same key order) with the same dtypes and values."""
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
    else:
        assert a.dtype == b.dtype and np.array_equal(a, b)


def assert_same_step(gym_step: tuple[Any, ...], native_step: tuple[Any, ...]) -> int:
    """Same observations, rewards, dones, and the same infos for the finished copies; returns how many."""
    (obs_g, rew_g, done_g, infos_g), (obs_n, rew_n, done_n, infos_n) = gym_step, native_step
    assert_same_obs(obs_g, obs_n)
    assert rew_g.dtype == rew_n.dtype and np.array_equal(rew_g, rew_n)
    assert np.array_equal(done_g, done_n)
    for i in np.flatnonzero(done_g):
        expected, got = dict(infos_g[i]), dict(infos_n[i])
        assert_same_obs(expected.pop("terminal_observation"), got.pop("terminal_observation"))
        assert expected == got and [type(v) for v in expected.values()] == [type(got[k]) for k in expected]
    for i in np.flatnonzero(~done_g):
        assert infos_n[i] == {}  # infos are built for finished copies only
    return int(done_g.sum())
