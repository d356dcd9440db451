"""The seam: every private or undocumented part of Stable-Baselines3 and Gymnasium that rlrun relies on.

Exact resume (:mod:`rlrun.run.resume_state`) and stopping on a signal (:mod:`rlrun.run.interrupts`) need state and steps
that the libraries keep to themselves; they reach them only through the functions here. Each name below has no
public equivalent, for the reason given. ``tests/rlrun/run/test_seam.py`` checks that each exists with the
shape used here, and CI runs it at both ends of the ranges ``pyproject.toml`` declares (``.ci/low-ends``), so a
library release that renames one fails there, naming it.

SB3's algorithms (``BaseAlgorithm``, ``OnPolicyAlgorithm``, ``OffPolicyAlgorithm``):

- The tail of ``collect_rollouts`` after ``callback.on_step()``, which SB3 skips when a callback stops training
  (:func:`finish_step`): ``_update_info_buffer(infos, dones)``; on-policy ``_last_obs`` and
  ``_last_episode_starts``; off-policy ``_store_transition(replay_buffer, buffer_actions, new_obs, rewards, dones,
  infos)``, ``_update_current_progress_remaining(num_timesteps, total_timesteps)`` with ``_total_timesteps``,
  ``_on_step()`` (DQN's exploration schedule and target updates), ``_episode_num`` and the action noise's
  ``reset``; and the loop's locals as callbacks see them (``infos``, ``dones``, ``new_obs``, ``rewards``,
  ``buffer_actions``, ``action_noise``). SB3 has no hook to finish the current step and then stop.
- ``_last_obs = None`` (:func:`forget_last_obs`): ``learn(reset_num_timesteps=False)`` resets the envs only when
  it is None; the public alternative, ``reset_num_timesteps=True``, also restarts the step count and schedules.
- gSDE's sampled noise, ``StateDependentNoiseDistribution.exploration_mat`` and ``exploration_matrices``, held by
  ``policy.action_dist`` (SAC: ``policy.actor.action_dist``) (:func:`sde_noise`, :func:`put_sde_noise`): drawn
  at each rollout start, not parameters, so ``model.save`` leaves them out; there is no getter or setter.
- ``Logger.name_to_value``, ``name_to_count`` and ``name_to_excluded`` (:func:`logger_state`,
  :func:`put_logger_state`): values recorded but not yet dumped; the logger has no state API.

sb3-contrib's algorithms:

- RecurrentPPO's ``_last_lstm_states`` (:func:`recurrent_states`, :func:`put_recurrent_states`): the LSTM states at
  the last observation, which its ``_excluded_save_params`` leaves out of ``model.save`` (a loaded model starts
  from zeros); and ``collect_rollouts``' local ``lstm_states``, which :func:`finish_step` stores there as SB3's
  tail of a step does.
- ARS draws its candidates' parameter noise (``th.normal`` in ``_do_one_update``) before the callbacks'
  ``on_rollout_start``, and nothing between the previous ``on_rollout_end`` and that draw uses torch's generator
  (:func:`draws_before_rollout_start`): a resume puts back the generator as it was at the rollout's end, so the
  same candidates are drawn again. ARS's own state (``weights``, ``_n_updates``) is saved by ``model.save``.
- ARS's ``_trigger_callback`` drops what the callbacks' ``on_step`` returns (:func:`ignores_callback_stop`): a
  callback cannot stop its ``learn()`` by returning False, only by raising.

SB3's vec envs:

- A ``DummyVecEnv``'s whole ``__dict__`` (its envs, ``buf_*`` buffers, ``actions``, ``reset_infos``, ``_seeds``,
  ``_options``), and that of rlrun's ``BatchedVecEnv`` (its arrays plus the same ``VecEnv`` attributes)
  (:func:`whole_state`, :func:`put_whole_state`): SB3 pickles no vec env; copying every attribute keeps whatever
  a release adds.
- ``VecMonitor.episode_returns``, ``episode_lengths`` and ``episode_count`` (:func:`monitor_counts`,
  :func:`put_monitor_counts`): the running episodes' sums, undocumented attributes.
- ``VecNormalize.returns`` (:func:`running_returns`, :func:`put_running_returns`): the running discounted
  returns that scale rewards, an undocumented attribute that ``VecNormalize``'s pickle drops.
- ``SubprocVecEnv``'s worker commands: ``env_method("__getstate__")`` (the worker looks the method up with
  Gymnasium's ``get_wrapper_attr`` on the outermost env, whose ``__getstate__`` is Python's, 3.11+) and
  ``set_attr("__dict__", state)`` (the worker's plain ``setattr`` on that env) (:func:`worker_states`,
  :func:`put_worker_states`): the only way to take an env out of a worker and put it back.
- ``VecEnv._seeds``, ``_options``, ``_reset_seeds()``, ``_reset_options()`` and ``_get_indices()``, the contract
  SB3's own ``DummyVecEnv`` implements, used by ``rlrun.envs.batched.base.BatchedVecEnv`` (a ``VecEnv``
  subclass). ``rlrun.envs`` imports nothing of the runner, so those calls stay there; they are checked here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from sb3_contrib import ARS, RecurrentPPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.distributions import StateDependentNoiseDistribution
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import SubprocVecEnv, VecMonitor, VecNormalize

# The private names, one list per owner, as the seam test checks them.
ALGORITHM_METHODS = ("_update_info_buffer", "_update_current_progress_remaining")
ALGORITHM_ATTRIBUTES = ("_last_obs", "_last_episode_starts", "_total_timesteps")
OFF_POLICY_METHODS = ("_store_transition", "_on_step")
OFF_POLICY_ATTRIBUTES = ("_episode_num",)
ROLLOUT_LOCALS = ("infos", "dones", "new_obs")  # collect_rollouts' locals finish_step reads, both kinds
OFF_POLICY_LOCALS = ("rewards", "buffer_actions", "action_noise")  # and off-policy only
SDE_NOISE = ("exploration_mat", "exploration_matrices")  # gSDE's sampled noise (not parameters)
LOGGER_STATE = ("name_to_value", "name_to_count", "name_to_excluded")
MONITOR_STATE = ("episode_returns", "episode_lengths", "episode_count")  # VecMonitor's (native envs)
VEC_ENV_CONTRACT = ("_seeds", "_options", "_reset_seeds", "_reset_options", "_get_indices")
RECURRENT_ATTRIBUTES = ("_last_lstm_states",)  # RecurrentPPO's, left out of its save
RECURRENT_LOCALS = ("lstm_states",)  # RecurrentPPO's collect_rollouts: the states after the step


def finish_step(model: BaseAlgorithm, rollout: Mapping[str, Any]) -> None:
    """Do what SB3's ``collect_rollouts`` does after a step's callbacks, which it skips when one of them stops
    training: ``rollout`` is the callbacks' ``locals``. On-policy, the partial rollout is discarded."""
    model._update_info_buffer(rollout["infos"], rollout["dones"])
    if not isinstance(model, OffPolicyAlgorithm):
        model._last_obs = rollout["new_obs"]
        model._last_episode_starts = rollout["dones"]
        if isinstance(model, RecurrentPPO):
            model._last_lstm_states = rollout["lstm_states"]
        return
    assert model.replay_buffer is not None
    model._store_transition(
        model.replay_buffer,
        rollout["buffer_actions"],
        rollout["new_obs"],
        rollout["rewards"],
        rollout["dones"],
        rollout["infos"],
    )
    model._update_current_progress_remaining(model.num_timesteps, model._total_timesteps)
    model._on_step()  # DQN: exploration schedule and target-network updates
    noise = rollout["action_noise"]
    for index, done in enumerate(rollout["dones"]):
        if done:
            model._episode_num += 1
            if noise is not None:
                noise.reset(**({"indices": [index]} if len(rollout["dones"]) > 1 else {}))


def forget_last_obs(model: BaseAlgorithm) -> None:
    """Make the next ``learn()`` reset the envs (they were rebuilt and not restored)."""
    model._last_obs = None  # type: ignore[assignment]


def recurrent_states(model: BaseAlgorithm) -> Any:
    """RecurrentPPO's LSTM states at its last observation (a copy), None for other algorithms."""
    return copy.deepcopy(model._last_lstm_states) if isinstance(model, RecurrentPPO) else None


def put_recurrent_states(model: BaseAlgorithm, saved: Any) -> None:
    """Put back what :func:`recurrent_states` returned, on the model's device."""
    if isinstance(model, RecurrentPPO) and saved is not None:
        model._last_lstm_states = type(saved)(
            *(tuple(tensor.to(model.device) for tensor in pair) for pair in saved)  # (pi, vf), each (h, c)
        )


def draws_before_rollout_start(model: BaseAlgorithm) -> bool:
    """Whether the algorithm draws its next rollout's random numbers from torch's generator before the callbacks'
    ``on_rollout_start`` (where snapshots are taken), with no draw since the previous ``on_rollout_end``."""
    return isinstance(model, ARS)


def ignores_callback_stop(model: BaseAlgorithm) -> bool:
    """Whether ``learn()`` goes on when a callback's ``on_step`` returns False (ARS), and has no rollout locals."""
    return isinstance(model, ARS)


def _sde_distributions(model: BaseAlgorithm) -> list[StateDependentNoiseDistribution]:
    holders = [model.policy, getattr(model.policy, "actor", None)]
    found = [getattr(holder, "action_dist", None) for holder in holders]
    return [dist for dist in found if isinstance(dist, StateDependentNoiseDistribution)]


def sde_noise(model: BaseAlgorithm) -> list[dict[str, Any]]:
    """gSDE's sampled exploration noise, one mapping per noise distribution of the policy (none without gSDE)."""
    return [{name: getattr(dist, name, None) for name in SDE_NOISE} for dist in _sde_distributions(model)]


def put_sde_noise(model: BaseAlgorithm, saved: list[dict[str, Any]]) -> None:
    """Put back what :func:`sde_noise` returned (values it found missing are left as they are)."""
    for dist, values in zip(_sde_distributions(model), saved, strict=False):
        for name, value in values.items():
            if value is not None:
                setattr(dist, name, value)


def logger_state(logger: Logger) -> dict[str, dict[str, Any]]:
    """The values recorded since the logger last wrote its output."""
    return {name: dict(getattr(logger, name)) for name in LOGGER_STATE}


def put_logger_state(logger: Logger, saved: Mapping[str, Mapping[str, Any]]) -> None:
    """Add back the values :func:`logger_state` returned."""
    for name, values in saved.items():
        getattr(logger, name).update(values)


def whole_state(venv: object) -> dict[str, Any]:
    """Every attribute of an in-process vec env (a shallow copy: pickling it copies the rest)."""
    return dict(venv.__dict__)


def put_whole_state(venv: object, saved: Mapping[str, Any]) -> None:
    """Put back every attribute :func:`whole_state` returned."""
    venv.__dict__.update(saved)


def monitor_counts(monitor: VecMonitor) -> dict[str, Any]:
    """``VecMonitor``'s running episode sums and count."""
    return {name: copy.copy(getattr(monitor, name)) for name in MONITOR_STATE}


def put_monitor_counts(monitor: VecMonitor, saved: Mapping[str, Any]) -> None:
    """Put back what :func:`monitor_counts` returned."""
    monitor.__dict__.update(saved)


def running_returns(normalizer: VecNormalize) -> Any:
    """``VecNormalize``'s running discounted returns (a copy)."""
    return normalizer.returns.copy()


def put_running_returns(normalizer: VecNormalize, saved: Any) -> None:
    """Put back what :func:`running_returns` returned."""
    normalizer.returns = saved


def worker_states(venv: SubprocVecEnv) -> list[dict[str, Any]]:
    """Each worker's outermost env's attributes, pickled in the worker and sent back through its pipe."""
    return venv.env_method("__getstate__")


def put_worker_states(venv: SubprocVecEnv, saved: list[dict[str, Any]]) -> None:
    """Send each worker its env's attributes back (as :func:`worker_states` returned them)."""
    for index, env_state in enumerate(saved):
        venv.set_attr("__dict__", env_state, indices=[index])
