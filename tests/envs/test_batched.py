"""The batched envs (envs/batched) are faithful drop-ins for DummyVecEnv over gym.make, with SB3's conventions."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from rlrun.envs.batched import ENV_CLASSES, BatchedRoomToy, NoBatchedVersion, make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from rlrun import envs
from tests.envs.helpers import assert_same_obs, assert_same_step

EXACT_IDS = ["rlrun/PointEnv-v0", "rlrun/GridWorld-v0", "rlrun/PointGoal-v0"]  # no draws while stepping


def policy(env_id: str, obs: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """Random actions (some out of bounds), every other copy heading for the goal so that episodes succeed."""
    if env_id in ("rlrun/GridWorld-v0", "rlrun/RoomToy-v0"):
        return rng.integers(4, size=n)
    actions = rng.uniform(-1.5, 1.5, (n, 2)).astype(np.float32)
    toward = -obs if env_id == "rlrun/PointEnv-v0" else obs["desired_goal"] - obs["achieved_goal"]
    actions[::2] = 10 * toward[::2]
    return actions


@pytest.mark.parametrize("env_id", EXACT_IDS)
def test_trajectories_equal_dummy_vec_env_over_gym_make(env_id: str) -> None:
    n = 6
    dummy = DummyVecEnv([lambda: gym.make(env_id) for _ in range(n)])
    dummy.seed(3)
    native = make_vec_env(env_id, n, seed=3)
    obs_g, obs_n = dummy.reset(), native.reset()
    assert_same_obs(obs_g, obs_n)
    rng, finished = np.random.default_rng(0), 0
    for _ in range(250):
        actions = policy(env_id, obs_g, rng, n)
        step_g, step_n = dummy.step(actions.copy()), native.step(actions.copy())
        finished += assert_same_step(step_g, step_n)
        obs_g = step_g[0]
    assert finished >= 20  # terminations, truncations and auto-resets were compared


STATE_CASES = {
    # env id -> (state attributes of the batched env, a function setting one single env to a batched row)
    "rlrun/PointEnv-v0": ("positions",),
    "rlrun/RoomToy-v0": ("positions",),
    "rlrun/GridWorld-v0": ("agents", "targets"),
    "rlrun/PointGoal-v0": ("positions", "goals"),
}


def set_single_state(env: gym.Env[Any, Any], env_id: str, rows: list[np.ndarray]) -> None:
    base: Any = env.unwrapped
    if env_id in ("rlrun/PointEnv-v0", "rlrun/RoomToy-v0"):
        base._x, base._y = rows[0].tolist()
    elif env_id == "rlrun/GridWorld-v0":
        base._agent, base._target = tuple(rows[0].tolist()), rows[1].copy()
    else:
        base._position, base._goal = rows[0].copy(), rows[1].copy()


def single_state(env: gym.Env[Any, Any], env_id: str) -> list[np.ndarray]:
    base: Any = env.unwrapped
    if env_id in ("rlrun/PointEnv-v0", "rlrun/RoomToy-v0"):
        return [np.array([base._x, base._y])]
    if env_id == "rlrun/GridWorld-v0":
        return [np.array(base._agent), base._target]
    return [base._position, base._goal]


def random_states(env_id: str, native: Any, rng: np.random.Generator) -> None:
    """Spread the copies over the whole space, walls and goals included."""
    n = native.num_envs
    if env_id == "rlrun/PointEnv-v0":
        native.positions[:] = rng.uniform(-2.1, 2.1, (n, 2)).clip(-2, 2)
        native.positions[: n // 4] = rng.uniform(-0.15, 0.15, (n // 4, 2))  # around the goal
    elif env_id == "rlrun/RoomToy-v0":
        native.positions[:] = rng.uniform(-0.1, 5.1, (n, 2)).clip(0, 5)
        native.positions[: n // 4] = 2.5 + rng.uniform(-0.7, 0.7, (n // 4, 2))
    elif env_id == "rlrun/GridWorld-v0":
        native.agents[:] = rng.integers(5, size=(n, 2))
        native.targets[:] = np.where(rng.random((n, 1)) < 0.5, native.agents + rng.integers(-1, 2, (n, 2)), 2)
        native.targets.clip(0, 4, out=native.targets)
    else:
        native.positions[:] = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        native.goals[:] = (native.positions + rng.uniform(-0.2, 0.2, (n, 2))).clip(-1, 1).astype(np.float32)


@pytest.mark.parametrize("env_id", list(STATE_CASES))
def test_same_states_and_actions_give_the_single_envs_next_states_rewards_and_flags(env_id: str) -> None:
    n = 400
    kwargs = {"noise_std": 0.0} if env_id == "rlrun/RoomToy-v0" else {}
    native = make_vec_env(env_id, n, seed=0, **kwargs)
    native.reset()
    single = gym.make(env_id, **kwargs)
    single.reset(seed=0)
    rng = np.random.default_rng(1)
    terminated_seen = 0
    for _ in range(3):
        random_states(env_id, native, rng)
        before = [getattr(native, name).copy() for name in STATE_CASES[env_id]]
        actions = policy(env_id, native.observe(), rng, n)
        rewards, terminated = native.advance(native.check_actions(actions))
        after = [getattr(native, name) for name in STATE_CASES[env_id]]
        for i in range(n):
            set_single_state(single, env_id, [rows[i] for rows in before])
            obs, reward, term, trunc, info = single.unwrapped.step(actions[i])
            expected = native.observe(np.array([i]))
            assert_same_obs({k: v[None] for k, v in obs.items()} if isinstance(obs, dict) else obs[None], expected)
            assert np.float32(reward) == rewards[i] and term == terminated[i] and not trunc
            assert info == native.copy_infos(np.array([i]))[0]
            assert all(
                np.array_equal(a, b) for a, b in zip(single_state(single, env_id), [r[i] for r in after], strict=True)
            )
        terminated_seen += int(terminated.sum())
    assert terminated_seen > 0


def test_roomtoy_noise_has_the_configured_mean_and_spread() -> None:
    n, std, step = 20_000, 0.05, 0.1
    native = BatchedRoomToy(n, None, noise_std=std)
    native.seed(0)
    native.reset()
    native.positions[:] = (1.0, 1.0)  # far from walls and goal
    native.advance(native.check_actions(np.zeros(n, dtype=np.int64)))  # north
    noise = native.positions - (1.0, 1.0 + step)
    assert np.all(np.abs(noise.mean(axis=0)) < 4 * std / np.sqrt(n))
    assert np.allclose(noise.std(axis=0), std, rtol=0.03)
    assert abs(np.corrcoef(noise.T)[0, 1]) < 0.05  # independent axes


def test_roomtoy_starts_where_the_single_env_starts_and_takes_state_options() -> None:
    native = make_vec_env("rlrun/RoomToy-v0", 3, seed=5)
    starts = native.reset()
    for i in range(3):
        obs, _ = gym.make("rlrun/RoomToy-v0").reset(seed=5 + i)
        assert np.array_equal(starts[i], obs)
    native.set_options({"state": [0.5, 4.0]})
    assert np.array_equal(native.reset(), np.tile(np.float32([0.5, 4.0]), (3, 1)))
    native.set_options({"start": [0.5, 4.0]})
    with pytest.raises(ValueError, match="unknown reset option"):
        native.reset()


@pytest.mark.parametrize("env_id", list(ENV_CLASSES))
def test_seeding_copy_i_with_seed_plus_i(env_id: str) -> None:
    a, b, c = make_vec_env(env_id, 4, seed=7), make_vec_env(env_id, 4, seed=7), make_vec_env(env_id, 4, seed=8)
    obs_a, obs_b, obs_c = a.reset(), b.reset(), c.reset()
    assert_same_obs(obs_a, obs_b)
    first = obs_a["agent" if env_id == "rlrun/GridWorld-v0" else "desired_goal"] if isinstance(obs_a, dict) else obs_a
    shifted = obs_c["agent" if env_id == "rlrun/GridWorld-v0" else "desired_goal"] if isinstance(obs_c, dict) else obs_c
    assert np.array_equal(first[1:], shifted[:3])  # copy i + 1 of seed 7 is copy i of seed 8
    a.seed(7)  # seed() applies at the next reset only, as in SB3
    assert_same_obs(a.reset(), obs_b)
    assert isinstance(a.reset(), dict) or not np.array_equal(a.reset(), obs_b)  # an unseeded reset continues


def test_auto_reset_and_infos_of_finished_copies() -> None:
    native = make_vec_env("rlrun/GridWorld-v0", 2, seed=0, max_episode_steps=3)
    native.reset()
    native.agents[:] = [[0, 0], [0, 0]]
    native.targets[:] = [[1, 0], [4, 4]]
    obs, rewards, dones, infos = native.step(np.array([0, 0]))  # copy 0 reaches its target
    assert dones.tolist() == [True, False] and rewards.tolist() == [1.0, 0.0]
    assert infos[0]["terminal_observation"]["agent"].tolist() == [1, 0]
    assert infos[0]["is_success"] is True and infos[0]["TimeLimit.truncated"] is False
    assert obs["agent"][0].tolist() != [1, 0] or obs["target"][0].tolist() != [1, 0]  # reset in the same step
    assert infos[1] == {}
    native.step(np.array([1, 1]))
    _, _, dones, infos = native.step(np.array([1, 1]))  # copy 1: third step, the time limit
    assert dones[1] and infos[1]["TimeLimit.truncated"] is True and infos[1]["is_success"] is False


def test_env_method_get_attr_and_what_is_not_supported() -> None:
    native = make_vec_env("rlrun/PointGoal-v0", 4, seed=0)
    single = gym.make("rlrun/PointGoal-v0").unwrapped
    achieved, desired = np.random.default_rng(0).uniform(-1, 1, (2, 64, 2)).astype(np.float32)
    (rewards,) = native.env_method("compute_reward", achieved, desired, [{}] * 64, indices=[0])
    assert np.array_equal(rewards, single.compute_reward(achieved, desired, None)) and rewards.dtype == np.float32
    assert native.get_attr("distance_threshold") == [0.1] * 4
    assert native.get_attr("render_mode", indices=[2]) == [None]
    assert native.has_attr("compute_reward") and native.env_is_wrapped(gym.Wrapper) == [False] * 4
    with pytest.raises(AttributeError, match="'start'"):
        native.env_method("start")
    with pytest.raises(AttributeError, match="share their parameters"):
        native.set_attr("arena", 2.0)
    with pytest.raises(NotImplementedError, match="single env"):
        native.render()
    with pytest.raises(ValueError, match="render"):
        make_vec_env("rlrun/PointGoal-v0", 2, render_mode="rgb_array")


@pytest.mark.parametrize(
    ("env_id", "actions", "message"),
    [
        ("rlrun/PointEnv-v0", np.zeros((3, 3)), r"shape \(2, 2\)"),
        ("rlrun/PointEnv-v0", np.array([[0.0, np.nan], [0.0, 0.0]]), "finite.*env copy 0"),
        ("rlrun/GridWorld-v0", np.array([0, 4]), "invalid action 4 for env copy 1"),
        ("rlrun/RoomToy-v0", np.array([0.5, 1.0]), "integer array"),
    ],
)
def test_bad_actions_are_refused_with_the_copy_named(env_id: str, actions: np.ndarray, message: str) -> None:
    native = make_vec_env(env_id, 2, seed=0)
    native.reset()
    with pytest.raises(ValueError, match=message):
        native.step(actions)


def test_unknown_ids_and_bad_arguments() -> None:
    with pytest.raises(NoBatchedVersion, match=r"'CartPole-v1'.*rlrun/PointEnv-v0.*env.vectorization=gym"):
        make_vec_env("CartPole-v1", 2)
    with pytest.raises(ValueError, match="size"):
        make_vec_env("rlrun/GridWorld-v0", 2, size=1)  # the single env's own check
    with pytest.raises(ValueError, match="num_envs"):
        make_vec_env("rlrun/GridWorld-v0", 0)
    assert (
        make_vec_env("rlrun/GridWorld-v0", 2, size=7).observation_space
        == gym.make("rlrun/GridWorld-v0", size=7).observation_space
    )
    assert set(ENV_CLASSES) == set(envs.ENV_IDS)


@pytest.mark.parametrize("env_id", list(ENV_CLASSES))
def test_a_pickled_copy_continues_exactly(env_id: str) -> None:
    native = make_vec_env(env_id, 8, seed=0)
    native.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        native.step(policy(env_id, native.observe(), rng, 8))
    clone: VecEnv = pickle.loads(pickle.dumps(native))
    for _ in range(120):  # past episode ends, so the copies' generators are compared too
        actions = policy(env_id, native.observe(), rng, 8)
        assert_same_step(native.step(actions.copy()), clone.step(actions.copy()))


@pytest.mark.parametrize("env_id", ["rlrun/PointEnv-v0", "rlrun/RoomToy-v0"])
def test_on_the_goal_circle_success_is_decided_as_the_single_env_decides(env_id: str) -> None:
    # Array arithmetic and math.hypot disagree in the last bit for some of these points, on either side of
    # the radius; the batched env must still decide as the single env's math.hypot does.
    n = 2000
    native = make_vec_env(env_id, n, seed=0, **({"noise_std": 0.0} if env_id == "rlrun/RoomToy-v0" else {}))
    native.reset()
    angles = np.random.default_rng(0).uniform(0, 2 * np.pi, n)
    radius, centre = (0.1, 0.0) if env_id == "rlrun/PointEnv-v0" else (0.6, 2.5)
    native.positions[:] = centre + radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    if env_id == "rlrun/PointEnv-v0":
        rewards, terminated = native.advance(native.check_actions(np.zeros((n, 2), dtype=np.float32)))
    else:  # a move there and back would round: compare the distance of the positions as they are
        native.positions[:] -= native._moves[0]
        rewards, terminated = native.advance(native.check_actions(np.zeros(n, dtype=np.int64)))
    distances = [native.copy_infos(np.array([i]))[0]["distance"] for i in range(n)]
    expected = [d <= radius if env_id == "rlrun/PointEnv-v0" else d < radius for d in distances]
    assert terminated.tolist() == expected
    assert np.array_equal(rewards, -np.array(distances, dtype=np.float64).astype(np.float32))


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("rlrun/PointEnv-v0", {"goal_tolerance": 0.9}),
        ("rlrun/GridWorld-v0", {"size": 2}),
        ("rlrun/PointGoal-v0", {"distance_threshold": 0.9}),
        ("rlrun/RoomToy-v0", {"goal_radius": 2.0}),
    ],
    ids=["point", "gridworld", "point_goal", "room"],
)
def test_starts_redrawn_many_times_are_the_single_envs_starts(env_id: str, kwargs: dict[str, Any]) -> None:
    # Large goals reject most start draws; the batched env draws ahead, and must use the draws in order.
    n = 5
    native = make_vec_env(env_id, n, seed=3, **kwargs)
    singles = [gym.make(env_id, **kwargs) for _ in range(n)]
    starts = [native.reset()] + [native.reset() for _ in range(40)]  # unseeded resets continue the generators
    for i, single in enumerate(singles):
        expected = [single.reset(seed=3 + i)[0]] + [single.reset()[0] for _ in range(40)]
        for got, want in zip(starts, expected, strict=True):
            if isinstance(want, dict):
                assert all(np.array_equal(got[key][i], want[key]) for key in want)
            else:
                assert np.array_equal(got[i], want)
