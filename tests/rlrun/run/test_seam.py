"""The seam (:mod:`rlrun.run.seam`): each private name of SB3 and Gymnasium it relies on exists, with the shape
it expects, in the installed versions (CI runs this file at both ends of pyproject.toml's ranges: .ci/low-ends);
what it does matches what the libraries do; and nothing else in rlrun/ reaches past the libraries' public API.
"""

from __future__ import annotations

import ast
import copy
import inspect
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from rlrun.envs.batched import BatchedVecEnv
from stable_baselines3 import DQN, PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.distributions import StateDependentNoiseDistribution
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.noise import OrnsteinUhlenbeckActionNoise
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor, VecNormalize

from rlrun.run import seam
from tests.rlrun.helpers import RecordLocals

RLRUN = Path(seam.__file__).resolve().parents[1]


def parameters(function: Callable[..., Any]) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name != "self"]


def cartpole(n_envs: int = 1) -> DummyVecEnv:
    return DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(n_envs)])


# -- the names exist, with the shape the seam uses ------------------------------------------------------------

METHODS = [
    (BaseAlgorithm, "_update_info_buffer", ["infos", "dones"]),
    (BaseAlgorithm, "_update_current_progress_remaining", ["num_timesteps", "total_timesteps"]),
    (
        OffPolicyAlgorithm,
        "_store_transition",
        ["replay_buffer", "buffer_action", "new_obs", "reward", "dones", "infos"],
    ),
    (OffPolicyAlgorithm, "_on_step", []),
    (VecEnv, "_reset_seeds", []),
    (VecEnv, "_reset_options", []),
    (VecEnv, "_get_indices", ["indices"]),
]


@pytest.mark.parametrize(("owner", "name", "expected"), METHODS, ids=[f"{o.__name__}.{n}" for o, n, _ in METHODS])
def test_each_private_method_exists_with_its_parameters(owner: type, name: str, expected: list[str]) -> None:
    method = getattr(owner, name, None)
    assert callable(method), f"{owner.__name__}.{name} is gone: rlrun.run.seam relies on it"
    assert parameters(method) == expected, f"{owner.__name__}.{name} now takes {parameters(method)}, not {expected}"


def test_the_seam_lists_the_methods_it_calls() -> None:
    names = {name for _, name, _ in METHODS}
    listed = {*seam.ALGORITHM_METHODS, *seam.OFF_POLICY_METHODS, *seam.VEC_ENV_CONTRACT}
    assert listed - {"_seeds", "_options"} == names


@pytest.mark.parametrize("algo", [PPO, DQN], ids=["on-policy", "off-policy"])
def test_each_private_attribute_and_rollout_local_exists(algo: type[BaseAlgorithm]) -> None:
    model = algo("MlpPolicy", cartpole(), policy_kwargs={"net_arch": [8]}, seed=0, device="cpu")
    recorder = RecordLocals()
    model.learn(10, callback=recorder)
    expected = [*seam.ALGORITHM_ATTRIBUTES, *seam.ROLLOUT_LOCALS]
    if issubclass(algo, OffPolicyAlgorithm):
        assert isinstance(model._episode_num, int), "OffPolicyAlgorithm._episode_num is gone or not an int"
        expected = [*expected, *seam.OFF_POLICY_LOCALS]
    for name in seam.ALGORITHM_ATTRIBUTES:
        assert hasattr(model, name), f"{algo.__name__}.{name} is gone: rlrun.run.seam relies on it"
    missing = set(seam.ROLLOUT_LOCALS) - recorder.names
    if issubclass(algo, OffPolicyAlgorithm):
        missing |= set(seam.OFF_POLICY_LOCALS) - recorder.names
    assert not missing, f"collect_rollouts no longer has the locals {sorted(missing)}: see seam.finish_step"


@pytest.mark.parametrize(
    ("algo", "env_id"), [(PPO, "Pendulum-v1"), (SAC, "Pendulum-v1")], ids=["policy.action_dist", "actor.action_dist"]
)
def test_gsde_noise_lives_where_the_seam_looks(algo: type[BaseAlgorithm], env_id: str) -> None:
    model = algo("MlpPolicy", env_id, use_sde=True, policy_kwargs={"net_arch": [8]}, seed=0, device="cpu")
    holder = getattr(model.policy, "actor", model.policy)
    assert isinstance(holder.action_dist, StateDependentNoiseDistribution)
    model.policy.reset_noise()
    for name in seam.SDE_NOISE:
        assert hasattr(holder.action_dist, name), f"StateDependentNoiseDistribution.{name} is gone"
    saved = seam.sde_noise(model)
    assert len(saved) == 1 and all(value is not None for value in saved[0].values())


def test_logger_monitor_and_normalizer_hold_the_attributes_the_seam_reads() -> None:
    logger = Logger(folder=None, output_formats=[])
    for name in seam.LOGGER_STATE:
        assert isinstance(getattr(logger, name, None), dict), f"Logger.{name} is gone or not a dict"
    monitor = VecMonitor(cartpole(2))
    for name in seam.MONITOR_STATE:
        assert hasattr(monitor, name), f"VecMonitor.{name} is gone"
    normalizer = VecNormalize(cartpole(2))
    assert isinstance(normalizer.returns, np.ndarray) and normalizer.returns.shape == (2,), "VecNormalize.returns"


def test_a_vec_env_holds_the_contract_its_subclasses_use() -> None:
    venv = cartpole(2)
    venv.seed(3)
    venv.set_options({"a": 1})
    assert venv._seeds == [3, 4], "VecEnv.seed() no longer fills VecEnv._seeds"
    assert venv._options == [{"a": 1}, {"a": 1}], "VecEnv.set_options() no longer fills VecEnv._options"
    venv.reset()
    assert venv._seeds == [None, None] and venv._options == [{}, {}], "reset() no longer clears _seeds/_options"
    assert list(venv._get_indices(None)) == [0, 1] and list(venv._get_indices(1)) == [1]


# -- what the seam does -----------------------------------------------------------------------------------------


class StopAt(BaseCallback):
    """At step ``at``: keep a copy of the step's bookkeeping, optionally finish the step as the seam does, and stop."""

    def __init__(self, at: int, finish: bool) -> None:
        super().__init__()
        self.at, self.finish = at, finish
        self.seen: dict[str, Any] = {}

    def _on_step(self) -> bool:
        if self.n_calls < self.at:
            return True
        if self.finish:
            seam.finish_step(self.model, self.locals)
        self.seen = bookkeeping(self.model)
        return False


def bookkeeping(model: BaseAlgorithm) -> dict[str, Any]:
    """What SB3's tail of a step changes: the algorithm's counters and schedules, its buffers, the noise."""
    kept: dict[str, Any] = {
        "last_obs": model._last_obs,
        "episode_info": [(info["r"], info["l"]) for info in model.ep_info_buffer or []],  # not "t": wall time
        "progress": model._current_progress_remaining,
    }
    if isinstance(model, OffPolicyAlgorithm):
        assert model.replay_buffer is not None
        buffer = model.replay_buffer
        kept |= {"episodes": model._episode_num, "pos": buffer.pos, "buffer": buffer.observations[: buffer.pos]}
        kept["exploration"] = getattr(model, "exploration_rate", None)
    else:
        kept["starts"] = model._last_episode_starts
    return copy.deepcopy(kept)


def short(env_id: str, n_envs: int) -> VecEnv:
    """Monitored copies whose episodes all end every 8 steps (so at the step the tests stop at)."""
    return make_vec_env(env_id, n_envs, seed=0, env_kwargs={"max_episode_steps": 8})


def tiny(algo: type[BaseAlgorithm], env: VecEnv, **kwargs: Any) -> BaseAlgorithm:
    return algo("MlpPolicy", env, policy_kwargs={"net_arch": [8]}, seed=0, device="cpu", **kwargs)


MODELS: dict[str, Callable[[], BaseAlgorithm]] = {
    "ppo": lambda: tiny(PPO, short("Pendulum-v1", 2), n_steps=64),
    "dqn": lambda: tiny(DQN, short("CartPole-v1", 1), learning_starts=100, exploration_fraction=1.0),
    "td3-ou-noise": lambda: tiny(
        TD3,
        short("Pendulum-v1", 1),
        learning_starts=100,
        action_noise=OrnsteinUhlenbeckActionNoise(np.zeros(1), np.full(1, 0.5)),
    ),
}


@pytest.mark.parametrize("name", MODELS)
def test_finish_step_does_what_sb3_does_after_a_step(name: str) -> None:
    """A run stopped at step k with the step finished by the seam agrees with one that SB3 let finish step k
    (seen at step k + 1, before SB3's own tail of it); every episode ends at step k."""
    at = 40
    finished, unstopped = StopAt(at, finish=True), StopAt(at + 1, finish=False)
    MODELS[name]().learn(200, callback=finished)
    MODELS[name]().learn(200, callback=unstopped)
    mine, theirs = finished.seen, unstopped.seen
    assert mine and theirs
    assert mine.keys() == theirs.keys()
    for key in mine:
        np.testing.assert_equal(mine[key], theirs[key], err_msg=f"{name}: {key} differs from SB3's own step")
    assert mine["episode_info"] and np.any(mine["starts" if name == "ppo" else "episodes"])
    if name == "td3-ou-noise":  # the seam reset the noise at the episode's end
        np.testing.assert_equal(finished.model.action_noise.noise_prev, np.zeros(1))


def test_forget_last_obs_makes_learn_reset_the_envs() -> None:
    model = PPO(
        "MlpPolicy", cartpole(), n_steps=16, batch_size=16, policy_kwargs={"net_arch": [8]}, seed=0, device="cpu"
    )
    model.learn(16)
    seam.forget_last_obs(model)
    assert model._last_obs is None
    model.learn(16, reset_num_timesteps=False)
    assert model._last_obs is not None and model.num_timesteps == 32


def test_sde_noise_put_back_is_the_noise_taken() -> None:
    model = PPO("MlpPolicy", "Pendulum-v1", use_sde=True, policy_kwargs={"net_arch": [8]}, seed=0, device="cpu")
    model.policy.reset_noise()
    saved = [{name: value.detach().clone() for name, value in noise.items()} for noise in seam.sde_noise(model)]
    model.policy.reset_noise()
    seam.put_sde_noise(model, saved)
    for name, value in seam.sde_noise(model)[0].items():
        assert (value == saved[0][name]).all(), name


def test_logger_state_round_trip() -> None:
    logger = Logger(folder=None, output_formats=[])
    logger.record("a", 1.0)
    logger.record_mean("b", 2.0)
    saved = seam.logger_state(logger)
    fresh = Logger(folder=None, output_formats=[])
    seam.put_logger_state(fresh, saved)
    assert seam.logger_state(fresh) == saved


def steps(venv: VecEnv, count: int = 5) -> list[Any]:
    return [venv.step(np.ones(venv.num_envs, dtype=np.int64))[0] for _ in range(count)]


def test_whole_state_of_a_dummy_vec_env_continues_where_it_was_taken() -> None:
    venv = cartpole(2)
    venv.seed(0)
    venv.reset()
    saved = pickle.loads(pickle.dumps(seam.whole_state(venv)))  # as a snapshot keeps it
    expected = steps(venv)
    other = cartpole(2)
    seam.put_whole_state(other, saved)
    np.testing.assert_equal(steps(other), expected)


def test_whole_state_and_monitor_counts_of_a_batched_env_continue_where_they_were_taken() -> None:
    from rlrun.envs import batched

    def make() -> VecMonitor:
        return VecMonitor(batched.make_vec_env("rlrun/GridWorld-v0", 3, 0, 20))

    venv = make()
    venv.reset()
    steps(venv, 3)
    base = venv.unwrapped
    assert isinstance(base, BatchedVecEnv)
    saved = pickle.loads(pickle.dumps((seam.whole_state(base), seam.monitor_counts(venv))))
    expected = steps(venv, 30)
    other = make()
    seam.put_whole_state(other.unwrapped, saved[0])
    seam.put_monitor_counts(other, saved[1])
    np.testing.assert_equal(steps(other, 30), expected)


def test_running_returns_round_trip() -> None:
    normalizer = VecNormalize(cartpole(2))
    normalizer.reset()
    steps(normalizer)
    saved = seam.running_returns(normalizer)
    other = VecNormalize(cartpole(2))
    seam.put_running_returns(other, saved)
    np.testing.assert_equal(other.returns, normalizer.returns)


def test_worker_states_continue_where_they_were_taken() -> None:
    venv = SubprocVecEnv([lambda: gym.make("CartPole-v1") for _ in range(2)], start_method="fork")
    try:
        venv.seed(0)
        venv.reset()
        saved = seam.worker_states(venv)
        expected = steps(venv)
        seam.put_worker_states(venv, saved)
        np.testing.assert_equal(steps(venv), expected)
    finally:
        venv.close()


# -- nothing else reaches past the libraries' public API ---------------------------------------------------------

# Private names used outside the seam on purpose, each with its reason (``path: expression``).
ALLOWED = {
    "make/models.py: cfg.algo._target_",  # a config key (Hydra's), not an attribute
    "cli/composition.py: cfg.algo._target_",  # the same config key, named in a command-line mistake's answer
    "make/jax_models.py: cfg.algo._target_",  # the same config key: the SB3 class that SBX's stands in for
    "sweep/orphans.py: os._exit",  # a joblib worker whose sweep died ends without running its parent's teardown
    "startup/bootstrap.py: multiprocessing.forkserver._forkserver",  # a sweep's or a study's fork server, ended
    "tune/forked_seeds.py: atexit._run_exitfuncs",  # a forked seed runs the exit handlers a fresh process runs
    "run/interrupts.py: super()._on_step",  # BaseCallback's documented override point
    "sweep/sweeper.py: hydra._internal.core_plugins.basic_launcher",  # Hydra's: rlrun.sweep.sweeper's docstring
    "sweep/sweeper.py: hydra._internal.core_plugins.basic_sweeper",
}


def private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute):
            private = node.attr.startswith("_") and not node.attr.endswith("__")
            if (private or node.attr == "__dict__") and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            ):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and node.module and "._" in node.module:
            found.append(node.module)
    return [f"{path.relative_to(RLRUN).as_posix()}: {use}" for use in found]


def test_only_the_seam_uses_private_names_of_the_libraries() -> None:
    seam_file = Path(seam.__file__).resolve()
    uses = {use for path in sorted(RLRUN.rglob("*.py")) if path.resolve() != seam_file for use in private_uses(path)}
    assert uses <= ALLOWED, f"private names outside rlrun.run.seam: {sorted(uses - ALLOWED)}"
