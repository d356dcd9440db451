"""``fused_adam``: the policy's Adam optimisers are torch's fused ones with ``auto`` (the default) and ``true``, the
default ones with ``false``; plain optimisers where fused Adam cannot apply (another optimiser, no optimiser, a torch
without it), with a note for ``true`` and silently for ``auto``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from omegaconf import DictConfig
from stable_baselines3 import PPO, SAC
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.make import models, optimizers, vec_envs
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config


@pytest.fixture
def built() -> Iterator[Callable[..., BaseAlgorithm]]:
    """``built("env=pendulum", "algo=sac", ...)``: the model training would build for this config (not trained)."""
    envs = []

    def build(*overrides: str) -> BaseAlgorithm:
        cfg = compose_config(*overrides)
        envs.append(vec_envs.make_train_env(cfg))
        return models.make_model(cfg, envs[-1])

    yield build
    for env in envs:
        env.close()


def policy_optimizers(model: BaseAlgorithm) -> list[torch.optim.Optimizer]:
    """The optimisers SB3 builds from ``policy_kwargs``: the policy's, or the actor's and critic's."""
    policy = model.policy
    if hasattr(policy, "critic"):
        return [policy.actor.optimizer, policy.critic.optimizer]
    return [policy.optimizer]


CASES = [("env=pendulum", "algo=sac"), ("env=gridworld", "algo=ppo"), ("env=gridworld", "algo=dqn")]


@pytest.mark.parametrize("pair", CASES, ids=["pendulum-sac", "gridworld-ppo", "gridworld-dqn"])
def test_fused_adam_on_builds_fused_adam_and_off_the_default(
    built: Callable[..., BaseAlgorithm], pair: tuple[str, str]
) -> None:
    on, default, off = built(*pair, "fused_adam=true"), built(*pair), built(*pair, "fused_adam=false")
    for optimizer in policy_optimizers(on) + policy_optimizers(default):
        assert isinstance(optimizer, torch.optim.Adam) and optimizer.defaults["fused"] is True
    for optimizer in policy_optimizers(off):
        assert isinstance(optimizer, torch.optim.Adam) and not optimizer.defaults["fused"]


def test_fused_adam_composes_with_the_presets_policy_kwargs(built: Callable[..., BaseAlgorithm]) -> None:
    """conf/tuned/pendulum_sac.yaml sets policy_kwargs.net_arch: it stays, and the optimisers are fused."""
    model = built("env=pendulum", "algo=sac", "fused_adam=true", "+algo.policy_kwargs.optimizer_kwargs.eps=1e-5")
    assert model.policy_kwargs["net_arch"] == [64, 64]
    for optimizer in policy_optimizers(model):
        assert optimizer.defaults["fused"] is True and optimizer.defaults["eps"] == 1e-5


def test_the_configs_own_fused_wins(built: Callable[..., BaseAlgorithm]) -> None:
    model = built("env=gridworld", "algo=ppo", "fused_adam=true", "+algo.policy_kwargs.optimizer_kwargs.fused=false")
    assert model.policy.optimizer.defaults["fused"] is False


@pytest.mark.parametrize(
    ("pair", "reason"),
    [
        (("env=pendulum", "algo=a2c"), "A2C's optimiser here is RMSprop"),
        (("env=pendulum", "algo=ars"), "ARS's policy builds no optimiser"),
        (("env=cartpole", "algo=qrdqn"), "QRDQN replaces the policy's optimizer_kwargs with its own"),
    ],
    ids=["a2c-rmsprop", "ars", "qrdqn"],
)
def test_fused_adam_skips_other_optimisers_with_a_note(
    built: Callable[..., BaseAlgorithm], caplog: pytest.LogCaptureFixture, pair: tuple[str, str], reason: str
) -> None:
    with caplog.at_level(logging.INFO, logger="rlrun"):
        model = built(*pair, "~tuned", "fused_adam=true")
    assert [m for m in caplog.messages if "fused_adam" in m] == [f"note: fused_adam=true skipped: {reason}"]
    optimizer = getattr(model.policy, "optimizer", None)
    assert optimizer is None or not optimizer.defaults.get("fused")


@pytest.mark.parametrize("pair", [("env=pendulum", "algo=a2c"), ("env=cartpole", "algo=qrdqn")], ids=["a2c", "qrdqn"])
def test_the_default_auto_skips_other_optimisers_silently(
    built: Callable[..., BaseAlgorithm], caplog: pytest.LogCaptureFixture, pair: tuple[str, str]
) -> None:
    with caplog.at_level(logging.INFO, logger="rlrun"):
        model = built(*pair, "~tuned")
    assert [m for m in caplog.messages if "fused_adam" in m] == []
    assert not model.policy.optimizer.defaults.get("fused")


class OldTorchAdam(torch.optim.Adam):
    """Adam as torch 2.3 has it: ``fused=True`` only for CUDA tensors (its message, word for word)."""

    def __init__(self, params: Any, **kwargs: Any) -> None:
        params = list(params)
        if kwargs.get("fused") and any(p.device.type == "cpu" for p in params):
            raise RuntimeError(
                "`fused=True` requires all the params to be floating point Tensors of supported devices: "
                "['cuda', 'xpu', 'privateuseone']."
            )
        super().__init__(params, **kwargs)


def test_fused_supported_asks_the_optimiser_itself() -> None:
    cpu = torch.device("cpu")
    assert optimizers.fused_supported(cpu, OldTorchAdam) is False
    assert optimizers.fused_supported(cpu) is True  # torch >= 2.4 (this environment's)


def test_a_torch_without_cpu_fused_adam_falls_back_with_one_line(
    built: Callable[..., BaseAlgorithm], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = optimizers.fused_supported
    monkeypatch.setattr(optimizers, "fused_supported", lambda device: probe(device, OldTorchAdam))
    with caplog.at_level(logging.INFO, logger="rlrun"):
        model = built("env=pendulum", "algo=sac", "fused_adam=true")
    notes = [m for m in caplog.messages if m.startswith("note: fused_adam")]
    assert len(notes) == 1 and "has no fused Adam on cpu (on CPU: torch >= 2.4); torch's default Adam" in notes[0]
    assert all(not optimizer.defaults["fused"] for optimizer in policy_optimizers(model))


def test_fused_kwargs_takes_the_probe_as_its_seam() -> None:
    cfg: DictConfig = compose_config("env=gridworld", "algo=ppo", "fused_adam=true")
    assert optimizers.fused_kwargs(cfg, PPO, "MlpPolicy", probe=lambda device: True)[0] == {
        "policy_kwargs": {"optimizer_kwargs": {"fused": True}}
    }
    kwargs, note = optimizers.fused_kwargs(cfg, PPO, "MlpPolicy", probe=lambda device: False)
    assert kwargs == {} and note is not None and "torch >= 2.4" in note
    auto = compose_config("env=gridworld", "algo=ppo")  # the default: an older torch trains plain, silently
    assert optimizers.fused_kwargs(auto, PPO, "MlpPolicy", probe=lambda device: False) == ({}, None)
    assert optimizers.fused_kwargs(auto, PPO, "MlpPolicy", probe=lambda device: True)[0] != {}


def test_a_trained_run_saves_and_resumes_with_fused_adam(
    tmp_path: Path, tiny_config: Callable[..., DictConfig]
) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo", "fused_adam=true")
    train(cfg, tmp_path / "run")
    model = PPO.load(tmp_path / "run" / "model.zip", device="cpu")
    assert model.policy.optimizer.defaults["fused"] is True


def test_another_backend_gets_the_note_and_no_torch_arguments() -> None:
    cfg = compose_config("env=pendulum", "algo=sac", "fused_adam=true", "algo.backend=jax")
    kwargs, note = optimizers.fused_kwargs(cfg, SAC, "MlpPolicy", probe=lambda device: True)
    assert kwargs == {} and note == "note: fused_adam=true skipped: the jax backend's optimisers are not torch's"
    auto = compose_config("env=pendulum", "algo=sac", "algo.backend=jax")
    assert optimizers.fused_kwargs(auto, SAC, "MlpPolicy", probe=lambda device: True) == ({}, None)
