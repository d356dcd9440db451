"""The seam's names for sb3-contrib (:mod:`rlrun.run.seam`): each exists with the shape the seam expects in the
installed sb3-contrib (CI runs this file at both ends of pyproject.toml's ranges: .ci/low-ends), and what the seam
does with it matches what sb3-contrib does."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import ARS, RecurrentPPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv

from rlrun.run import seam
from tests.rlrun.helpers import RecordLocals


def recurrent(n_envs: int = 2) -> RecurrentPPO:
    env = make_vec_env("CartPole-v1", n_envs, seed=0, env_kwargs={"max_episode_steps": 8})
    kwargs = {"net_arch": [8], "lstm_hidden_size": 4}
    return RecurrentPPO("MlpLstmPolicy", env, n_steps=16, batch_size=16, policy_kwargs=kwargs, seed=0, device="cpu")


def states(model: BaseAlgorithm) -> list[torch.Tensor]:
    saved = seam.recurrent_states(model)
    return [tensor for pair in saved for tensor in pair]


def test_recurrent_ppo_keeps_its_lstm_states_where_the_seam_looks_and_leaves_them_out_of_its_save(
    tmp_path: Path,
) -> None:
    model = recurrent()
    for name in seam.RECURRENT_ATTRIBUTES:
        assert hasattr(model, name), f"RecurrentPPO.{name} is gone: rlrun.run.seam relies on it"
    lstm = model.policy.lstm_actor
    found = seam.recurrent_states(model)
    assert [field for field in found._fields] == ["pi", "vf"], "RecurrentPPO's RNNStates is no longer (pi, vf)"
    assert all(t.shape == (lstm.num_layers, 2, lstm.hidden_size) for t in states(model)), "(layers, n_envs, hidden)"
    recorder = RecordLocals()
    model.learn(16, callback=recorder)
    missing = set(seam.RECURRENT_LOCALS) - recorder.names
    assert not missing, f"RecurrentPPO.collect_rollouts no longer has the locals {sorted(missing)}"

    model.learn(32)  # LSTM states away from zero, which a loaded model starts from
    model.save(tmp_path / "model.zip")
    loaded = RecurrentPPO.load(tmp_path / "model.zip", env=model.get_env(), device="cpu")
    assert not all(torch.equal(a, b) for a, b in zip(states(model), states(loaded), strict=True))
    seam.put_recurrent_states(loaded, copy.deepcopy(seam.recurrent_states(model)))
    assert all(torch.equal(a, b) for a, b in zip(states(model), states(loaded), strict=True))
    assert seam.recurrent_states(loaded) is not loaded._last_lstm_states  # a copy, not the live states


class StopAt(BaseCallback):
    """At step ``at``: finish the step as the seam does (or not), keep the LSTM states, and stop."""

    def __init__(self, at: int, finish: bool) -> None:
        super().__init__()
        self.at, self.finish = at, finish
        self.seen: list[torch.Tensor] = []

    def _on_step(self) -> bool:
        if self.n_calls < self.at:
            return True
        if self.finish:
            seam.finish_step(self.model, self.locals)
        self.seen = [t.clone() for t in states(self.model)]
        return False


def test_finish_step_stores_the_lstm_states_as_recurrent_ppo_does_after_a_step() -> None:
    at = 5
    finished, unstopped = StopAt(at, finish=True), StopAt(at + 1, finish=False)
    recurrent().learn(16, callback=finished)
    recurrent().learn(16, callback=unstopped)
    assert finished.seen and all(torch.equal(a, b) for a, b in zip(finished.seen, unstopped.seen, strict=True))
    assert not all(torch.equal(t, torch.zeros_like(t)) for t in finished.seen)


class RolloutGenerator(BaseCallback):
    """torch's generator state at each rollout's end and at the next one's start."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[torch.Tensor] = []
        self.starts: list[torch.Tensor] = []

    def _on_rollout_start(self) -> None:
        self.starts.append(torch.get_rng_state())

    def _on_rollout_end(self) -> None:
        self.ends.append(torch.get_rng_state())

    def _on_step(self) -> bool:
        return True


def ars(**kwargs: Any) -> ARS:
    env = DummyVecEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=8)])  # returns differ among candidates
    return ARS("MlpPolicy", env, n_delta=2, policy_kwargs={"net_arch": [8]}, seed=0, device="cpu", **kwargs)


def test_ars_draws_its_candidates_between_a_rollout_end_and_the_next_start_only() -> None:
    model = ars()
    assert seam.draws_before_rollout_start(model) and not seam.draws_before_rollout_start(recurrent())
    recorder = RolloutGenerator()
    model.learn(200, callback=recorder)
    assert len(recorder.starts) >= 3
    for end, start in zip(recorder.ends, recorder.starts[1:], strict=False):
        assert not torch.equal(end, start), "ARS no longer draws before on_rollout_start"
        torch.set_rng_state(end)
        torch.normal(mean=0.0, std=1.0, size=(model.n_delta, model.n_params))  # ARS's _do_one_update, once
        assert torch.equal(torch.get_rng_state(), start), "ARS draws something else between two rollouts"


def test_ars_saves_its_weights_and_update_count(tmp_path: Path) -> None:
    model = ars()
    model.learn(100)
    model.save(tmp_path / "model.zip")
    loaded = ARS.load(tmp_path / "model.zip", device="cpu")
    assert loaded._n_updates == model._n_updates > 0
    assert torch.equal(loaded.weights, model.weights) and bool(model.weights.abs().sum() > 0)  # moved from zero
    np.testing.assert_equal(
        torch.nn.utils.parameters_to_vector(loaded.policy.parameters()).detach().numpy(), model.weights.numpy()
    )
