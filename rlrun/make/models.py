"""Make the SB3 model a run trains from its config: the algorithm class, the policy chosen from the observation
space, a new model or one loaded from a file.

With :mod:`rlrun.make.vec_envs`, the only module that calls :func:`hydra.utils.instantiate`. Runtime objects (the
env, the seed, the device) are passed in as call-site arguments; the config is never written to.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from gymnasium import spaces
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.vec_env import VecEnv

from rlrun.config import backend
from rlrun.make import jax_models, optimizers

log = logging.getLogger("rlrun")

# The smallest image side SB3's NatureCNN (CnnPolicy's features extractor) takes: its convolutions are 8 (stride 4),
# 4 (stride 2) and 3 (stride 1); 36 is the least size that leaves them at least one output (MiniGrid's is 7).
NATURE_CNN_MIN = 36


def image_too_small(observation_space: spaces.Space) -> bool:
    """Whether ``observation_space`` is an image (SB3's test) with a side shorter than :data:`NATURE_CNN_MIN`."""
    if not is_image_space(observation_space, check_channels=False):
        return False
    shape = observation_space.shape
    assert shape is not None  # an image space has one
    sides = shape[1:] if shape[0] < min(shape[1:]) else shape[:2]  # channels first, as VecTransposeImage makes it
    return min(sides) < NATURE_CNN_MIN


def default_policy(observation_space: spaces.Space) -> str:
    """SB3's policy for an observation space: Dict -> MultiInputPolicy, image -> CnnPolicy, else Mlp.

    An image smaller than NatureCNN takes (:func:`image_too_small`, e.g. MiniGrid's 7x7x3) gets MlpPolicy: training
    says so in a one-line note (:func:`rlrun.checks.rules.small_image_note`).
    """
    if isinstance(observation_space, spaces.Dict):
        return "MultiInputPolicy"
    if is_image_space(observation_space, check_channels=False) and not image_too_small(observation_space):
        return "CnnPolicy"
    return "MlpPolicy"


def policy_alias(algo_cls: type[BaseAlgorithm], standard: str) -> str:
    """The name ``algo_cls`` gives SB3's ``standard`` policy in its ``policy_aliases``: the name itself where
    the class has it, else the one alias that extends it (sb3-contrib's RecurrentPPO: ``MlpPolicy`` ->
    ``MlpLstmPolicy``); ``standard`` unchanged where the class has none (its construction names the problem)."""
    aliases = getattr(algo_cls, "policy_aliases", {})
    stem = standard.removesuffix("Policy")
    extended = [name for name in aliases if name.startswith(stem) and name.endswith("Policy")]
    if standard in aliases or len(extended) != 1:
        return standard
    return extended[0]


def policy_for(cfg: DictConfig, observation_space: spaces.Space) -> str:
    """The configured ``algo.policy``, or the default for the observation space when it is null."""
    return cfg.algo.get("policy") or policy_alias(algo_class(cfg), default_policy(observation_space))


def algo_class(cfg: DictConfig) -> type[BaseAlgorithm]:
    """The SB3 class named by ``algo._target_``: what the rules check against, on either backend."""
    return get_class(cfg.algo._target_)


def model_class(cfg: DictConfig) -> type[BaseAlgorithm]:
    """The class the run trains: :func:`algo_class`, or with ``algo.backend=jax`` SBX's, made by
    :func:`rlrun.make.jax_models.sbx_class` (XLA's threads set as JAX starts; refused with exit 2 where there is no
    SBX class to make)."""
    if not backend.is_jax(cfg):
        return algo_class(cfg)
    jax_models.refuse(jax_models.unavailable(cfg))
    return jax_models.sbx_class(cfg)


def algo_arguments(cfg: DictConfig, model_cls: type[BaseAlgorithm]) -> dict[str, Any]:
    """The algo config as ``model_cls`` (:func:`model_class`) takes it: ``algo.backend`` is rlrun's, not an argument;
    with jax, SBX's spelling (refused with exit 2 where SBX cannot take the config)."""
    if backend.is_jax(cfg):
        jax_models.refuse(jax_models.problems(cfg, model_cls))
        return jax_models.arguments(cfg, model_cls)
    container = OmegaConf.to_container(cfg.algo, resolve=True)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items() if key != backend.KEY}


def uses_her(cfg: DictConfig) -> bool:
    """Whether the algorithm samples from SB3's ``HerReplayBuffer`` (and so needs a goal env)."""
    from stable_baselines3 import HerReplayBuffer

    node = cfg.algo.get("replay_buffer_class")
    if node is None:
        return False
    buffer_class = instantiate(node)
    return isinstance(buffer_class, type) and issubclass(buffer_class, HerReplayBuffer)


def load_model(cfg: DictConfig, path: Path, env: VecEnv) -> BaseAlgorithm:
    """Load a saved model onto ``env`` without resetting it (its last observations stay valid)."""
    return model_class(cfg).load(path, env=env, device=cfg.device, force_reset=False)


def make_model(cfg: DictConfig, env: VecEnv) -> BaseAlgorithm:
    """Instantiate the algorithm on ``env``; rlrun passes policy, seed, device and verbosity, and the policy's
    keyword arguments with fused Adam where ``fused_adam`` asks for it (:mod:`rlrun.make.optimizers`)."""
    arguments = algo_arguments(cfg, model_class(cfg))
    for line in jax_models.translation_notes(cfg) if backend.is_jax(cfg) else []:
        log.info("%s", line)
    policy = policy_for(cfg, env.observation_space)
    fused, note = optimizers.fused_kwargs(cfg, algo_class(cfg), policy)
    if note is not None:
        log.info("%s", note)
    model = instantiate(
        arguments,
        policy=policy,
        env=env,
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
        _convert_="all",
        **fused,
    )
    if fused and (note := optimizers.unfused_note(cfg, model)) is not None:
        log.info("%s", note)
    return model
