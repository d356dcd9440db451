"""Build what a run trains from its config: the envs (wrapped, vectorised, seeded) and the SB3 model.

This is the only module that calls :func:`hydra.utils.instantiate`. Runtime objects (the env, the
seed, the device) are passed in as call-site arguments; the config is never written to.

Per env copy the stack is ``gym.make`` (with the registration's ``TimeLimit``) -> SB3's ``Monitor``
-> the user's wrappers in list order, so logged and evaluated returns are the raw env's returns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecNormalize

import envs  # noqa: F401  (registers rlrun/* ids, also in subprocess workers that unpickle this module)
from rlrun.errors import UserError
from rlrun.nan import CheckNan

Wrapper = Callable[[gym.Env], gym.Env]


def eval_seed(seed: int) -> int:
    """The eval env's seed: a stream separate from the training envs' ``seed + i``."""
    return int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])


def default_policy(observation_space: spaces.Space) -> str:
    """SB3's policy for an observation space: Dict -> MultiInputPolicy, image -> CnnPolicy, else Mlp."""
    if isinstance(observation_space, spaces.Dict):
        return "MultiInputPolicy"
    if is_image_space(observation_space, check_channels=False):
        return "CnnPolicy"
    return "MlpPolicy"


def policy_for(cfg: DictConfig, observation_space: spaces.Space) -> str:
    """The configured ``algo.policy``, or the default for the observation space when it is null."""
    return cfg.algo.get("policy") or default_policy(observation_space)


def _gym_make(env_id: str, max_episode_steps: int | None, render_mode: str | None, **kwargs: Any) -> gym.Env:
    """``gym.make`` with a message that names the bad id and how to find a good one."""
    extra: dict[str, Any] = dict(kwargs)
    if max_episode_steps is not None:
        extra["max_episode_steps"] = max_episode_steps
    if render_mode is not None:
        extra["render_mode"] = render_mode
    try:
        return gym.make(env_id, **extra)
    except gym.error.DependencyNotInstalled as error:
        raise UserError(
            f"env.id={env_id!r} needs a package that is not installed: {error}",
            "install it as the message says (e.g. pip install 'gymnasium[box2d]'), then run again",
        ) from None
    except gym.error.Error as error:
        raise UserError(
            f"cannot make env.id={env_id!r}: {error}",
            "list the registered ids with `rlrun-envs --all`; a module of your own is env.id=mypkg:MyEnv-v0",
        ) from None
    except ModuleNotFoundError as error:
        raise UserError(
            f"env.id={env_id!r}: importing its module failed: {error}",
            "install the package that registers the env, or fix the module name before the ':'",
        ) from None
    except TypeError as error:
        raise UserError(
            f"env.id={env_id!r} rejected its arguments: {error}",
            "check env.kwargs against the env's constructor",
        ) from None


def make_wrappers(wrappers_cfg: DictConfig) -> list[tuple[str, Wrapper]]:
    """The wrapper partials in list order, each with its config name for error messages."""
    return [(str(name), instantiate(node, _convert_="all")) for name, node in wrappers_cfg.items()]


def apply_wrappers(env: gym.Env, wrappers: list[tuple[str, Wrapper]]) -> gym.Env:
    """Wrap ``env`` in list order; a wrapper that cannot apply names itself and the env."""
    for name, wrapper in wrappers:
        try:
            env = wrapper(env)
        except (ValueError, TypeError, AssertionError) as error:
            env_id = env.spec.id if env.spec else type(env.unwrapped).__name__
            raise UserError(
                f"wrapper {name!r} cannot apply to {env_id}: {error}",
                "remove it from wrappers=[...] or put it after a wrapper that makes it fit",
            ) from None
    return env


def make_env(cfg: DictConfig, render_mode: str | None = None) -> gym.Env:
    """One env copy exactly as training builds it: gym.make -> Monitor -> wrappers (unseeded)."""
    env_cfg = cfg.env
    kwargs = OmegaConf.to_container(env_cfg.kwargs, resolve=True)
    env = _gym_make(env_cfg.id, env_cfg.max_episode_steps, render_mode, **kwargs)  # type: ignore[arg-type]
    return apply_wrappers(Monitor(env), make_wrappers(cfg.wrappers))


def make_vec(cfg: DictConfig, n_envs: int, seed: int, vec_env: str = "dummy", render_mode: str | None = None) -> VecEnv:
    """``n_envs`` copies seeded ``seed + i``, vectorised (SB3's ``make_vec_env`` seeds and monitors)."""
    env_cfg = cfg.env
    kwargs = OmegaConf.to_container(env_cfg.kwargs, resolve=True)
    factory = functools.partial(_gym_make, env_cfg.id, env_cfg.max_episode_steps, render_mode)
    wrappers = make_wrappers(cfg.wrappers)
    return make_vec_env(
        factory,
        n_envs=n_envs,
        seed=seed,
        env_kwargs=kwargs,  # type: ignore[arg-type]
        wrapper_class=functools.partial(apply_wrappers, wrappers=wrappers),
        vec_env_cls=SubprocVecEnv if vec_env == "subproc" else DummyVecEnv,
    )


def make_train_env(cfg: DictConfig, normalizer: Path | None = None) -> VecEnv:
    """The training envs: ``env.n_envs`` copies, then NaN checks and ``VecNormalize`` as configured.

    ``normalizer``: saved VecNormalize statistics to continue from (a resumed run).
    """
    venv = make_vec(cfg, cfg.env.n_envs, cfg.seed, cfg.env.vec_env)
    if cfg.check_nan:
        venv = CheckNan(venv)
    norm = cfg.env.normalize
    if normalizer is not None:
        return VecNormalize.load(str(normalizer), venv)
    if norm.obs or norm.reward:
        venv = VecNormalize(venv, norm_obs=norm.obs, norm_reward=norm.reward, gamma=cfg.algo.get("gamma", 0.99))
    return venv


def make_eval_env(
    cfg: DictConfig,
    render_mode: str | None = None,
    seed: int | None = None,
    normalizer: Path | None = None,
    n_envs: int = 1,
) -> VecEnv:
    """``n_envs`` in-process copies on their own seed stream (copy i: eval seed + i); normalised like
    training, statistics frozen.

    ``normalizer``: saved VecNormalize statistics to evaluate with (a finished run or a snapshot).
    """
    venv = make_vec(cfg, n_envs, eval_seed(cfg.seed) if seed is None else seed, render_mode=render_mode)
    norm = cfg.env.normalize
    if normalizer is not None:
        venv = VecNormalize.load(str(normalizer), venv)
    elif norm.obs or norm.reward:
        venv = VecNormalize(venv, norm_obs=norm.obs, norm_reward=False)
    if isinstance(venv, VecNormalize):
        venv.training, venv.norm_reward = False, False
    return venv


def algo_class(cfg: DictConfig) -> type[BaseAlgorithm]:
    """The SB3 class named by ``algo._target_``."""
    return get_class(cfg.algo._target_)


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
    return algo_class(cfg).load(path, env=env, device=cfg.device, force_reset=False)


def make_model(cfg: DictConfig, env: VecEnv) -> BaseAlgorithm:
    """Instantiate the algorithm on ``env``; rlrun passes policy, seed, device and verbosity."""
    return instantiate(
        cfg.algo,
        policy=policy_for(cfg, env.observation_space),
        env=env,
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
        _convert_="all",
    )
