"""Build what a run trains from its config: the envs (wrapped, vectorised, seeded) and the SB3 model.

This is the only module that calls :func:`hydra.utils.instantiate`. Runtime objects (the env, the
seed, the device) are passed in as call-site arguments; the config is never written to.

Per env copy the stack is ``gym.make`` (with the registration's ``TimeLimit``) -> SB3's ``Monitor``
-> the env family's wrappers (``env.wrappers``, e.g. SB3's ``AtariWrapper``) -> the user's wrappers in list
order, so logged and evaluated returns are the raw env's returns (an Atari game's unclipped score). Over the
vectorised copies: ``VecFrameStack`` (``env.frame_stack``), ``VecCheckNan``, then ``VecNormalize``.
"""

from __future__ import annotations

import functools
import json
import signal
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecFrameStack, VecNormalize

import rlrun.envs  # noqa: F401  (registers rlrun/* ids, also in subprocess workers that unpickle this module)
from rlrun.config.errors import UserError
from rlrun.config.upgrade import load_pickle
from rlrun.make import episode_cap, families, gym_make, native
from rlrun.make.nan import CheckNan

Wrapper = Callable[[gym.Env], gym.Env]
# The stop signals (rlrun.run.signals.SIGNALS, a layer above this one; a test checks the two agree), which
# subprocess env workers ignore: the main process decides when to stop.
WORKER_IGNORES = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2, signal.SIGHUP)
RMS = ("mean", "var", "count")  # what SB3's RunningMeanStd holds, as saved in vecnormalize.npz


def eval_seed(seed: int) -> int:
    """The eval env's seed: a stream separate from the training envs' ``seed + i``."""
    return int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])


def _gym_make(env_id: str, max_episode_steps: int | None, render_mode: str | None, **kwargs: Any) -> gym.Env:
    """``gym.make`` with a message that names the bad id or arguments and how to fix them.

    An id not found is looked for again once the installed families have registered theirs (MiniGrid, Gymnasium-
    Robotics, ALE: :mod:`rlrun.make.gym_make`); a failure inside the env names the line where it started.
    """
    extra: dict[str, Any] = dict(kwargs)
    if max_episode_steps is not None:
        extra["max_episode_steps"] = max_episode_steps
    if render_mode is not None:
        extra["render_mode"] = render_mode
    try:
        try:
            return gym.make(env_id, **extra)
        except (gym.error.NameNotFound, gym.error.NamespaceNotFound):
            if not gym_make.register_installed_families():
                raise
            return gym.make(env_id, **extra)
    except gym.error.DependencyNotInstalled as error:
        raise UserError(
            f"env.id={env_id!r} needs a package that is not installed: {error}",
            "install it as the message says (e.g. pip install 'gymnasium[box2d]'), then run again",
        ) from None
    except gym.error.Error as error:
        raise UserError(f"cannot make env.id={env_id!r}: {error}", gym_make.unknown_id_fix(env_id)) from None
    except ModuleNotFoundError as error:
        raise UserError(
            f"env.id={env_id!r}: importing its module failed: {error}",
            "install the package that registers the env, or fix the module name before the ':'",
        ) from None
    except Exception as error:  # whatever the env's constructor raises: for its arguments, or a library's failure
        reason = f"{type(error).__name__}: {error}"
        at, fix = gym_make.failure_fix(error, env_id)
        if kwargs:
            raise UserError(
                f"env.id={env_id!r} rejected env.kwargs={kwargs}: {reason}{at}",
                "check env.kwargs against the env's constructor (`rlrun-envs --all` shows its entry point)",
            ) from error
        raise UserError(f"env.id={env_id!r} failed while being made: {reason}{at}", fix) from error


def _make_copy(
    env_id: str,
    max_episode_steps: int | None,
    render_mode: str | None,
    kwargs: dict[str, Any],
    evaluation: bool = False,
    packages: tuple[str, ...] = (),
) -> gym.Env:
    """One raw env copy, once ``env.packages`` are imported (here: subprocess workers import them too); an
    evaluation copy of an env without a time limit is capped (:mod:`rlrun.make.episode_cap`)."""
    gym_make.import_packages(packages)
    env = _gym_make(env_id, max_episode_steps, render_mode, **kwargs)
    return episode_cap.capped_for_evaluation(env) if evaluation else env


def _env_factory(cfg: DictConfig, render_mode: str | None, evaluation: bool = False) -> Callable[[], gym.Env]:
    """Makes one raw env copy: ``gym.make`` with the config's id, episode limit and ``env.kwargs``."""
    kwargs = cast(dict[str, Any], OmegaConf.to_container(cfg.env.kwargs, resolve=True))
    packages = tuple(cfg.env.get("packages") or ())  # runs made before the key have none
    return functools.partial(
        _make_copy, cfg.env.id, cfg.env.max_episode_steps, render_mode, kwargs, evaluation, packages
    )


@dataclass(frozen=True)
class FirstStep:
    """What the first step of one raw env copy returned, for the checks made before a run creates anything."""

    reward: Any


def first_step(cfg: DictConfig) -> FirstStep | None:
    """One raw env copy (``gym.make``, under SB3's ``Monitor`` in training, which needs the reward to be one number),
    reset with the run's seed and stepped once with a sampled action, then closed: what it returned. None when the
    copy cannot reset or step here: training meets that failure where it would, in the env's own words."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Gymnasium's passive checker on the first step: the checks say more
            env = _env_factory(cfg, None)()
            try:
                env.reset(seed=cfg.seed)
                env.action_space.seed(cfg.seed)
                return FirstStep(env.step(env.action_space.sample())[1])
            finally:
                env.close()
    except UserError:
        raise
    except Exception:
        return None


def make_wrappers(wrappers_cfg: DictConfig | dict[str, Any], key: str = "wrappers") -> list[tuple[str, Wrapper]]:
    """The wrapper partials in list order, each with its name for error messages: the config name for the
    user's ``wrappers``, the full key (``env.wrappers.atari``) for those under another ``key``."""
    made = []
    for option, node in wrappers_cfg.items():
        name = str(option) if key == "wrappers" else f"{key}.{option!s}"
        try:
            made.append((name, instantiate(node, _convert_="all")))
        except Exception as error:
            reason = error.__cause__ or error
            raise UserError(
                f"wrapper {name!r} cannot be configured: {type(reason).__name__}: {reason}",
                f"check the keys under {_wrapper_key(name)} against the wrapper's arguments",
            ) from None
    return made


def _wrapper_key(name: str) -> str:
    """The config key of a wrapper named by :func:`make_wrappers`."""
    return name if name.startswith("env.") else f"wrappers.{name}"


def env_wrappers(cfg: DictConfig) -> list[tuple[str, Wrapper]]:
    """Every wrapper of an env copy in order: the family's (``env.wrappers``), then the user's (``wrappers``).

    Checks first that the env family's extra is installed (a ``pip install`` command if not) and imports the
    package that registers its ids, so ``env=atari env.id=ALE/Pong-v5`` needs no ``module:`` prefix.
    """
    extra = cfg.env.get("extra")
    families.require(extra, f"env.id={cfg.env.id!r}")
    families.register(extra)
    return make_wrappers(cfg.env.get("wrappers") or {}, key="env.wrappers") + make_wrappers(cfg.wrappers)


def apply_wrappers(env: gym.Env, wrappers: list[tuple[str, Wrapper]]) -> gym.Env:
    """Wrap ``env`` in list order; a wrapper that cannot apply (whatever it raises) names itself and the env."""
    for name, wrapper in wrappers:
        try:
            env = wrapper(env)
        except Exception as error:
            env_id = env.spec.id if env.spec else type(env.unwrapped).__name__
            raise UserError(
                f"wrapper {name!r} cannot apply to {env_id}: {error}",
                f"check {_wrapper_key(name)}.* (its arguments), remove it from wrappers=[...], "
                "or put it after a wrapper that makes it fit",
            ) from None
    return env


def make_env(cfg: DictConfig, render_mode: str | None = None) -> gym.Env:
    """One env copy exactly as training builds it: gym.make -> Monitor -> family's and user's wrappers
    (unseeded; ``env.frame_stack`` applies to vectorised envs only)."""
    wrappers = env_wrappers(cfg)  # first: the family's extra is checked and its ids registered
    return apply_wrappers(Monitor(_env_factory(cfg, render_mode)()), wrappers)


def make_vec(
    cfg: DictConfig,
    n_envs: int,
    seed: int,
    vec_env: str = "dummy",
    render_mode: str | None = None,
    evaluation: bool = False,
) -> VecEnv:
    """``n_envs`` copies seeded ``seed + i``, vectorised (SB3's ``make_vec_env`` seeds and monitors), the
    last ``env.frame_stack`` observations stacked when it is set; ``evaluation``: episodes capped where the env
    has no time limit."""
    wrappers = env_wrappers(cfg)
    factory = _env_factory(cfg, render_mode, evaluation)
    if vec_env == "subproc":  # workers ignore Ctrl-C and SIGTERM: the main process decides (rlrun.run.interrupts)
        factory = functools.partial(ignore_stop_signals, factory)
    venv = make_vec_env(
        factory,
        n_envs=n_envs,
        seed=seed,
        wrapper_class=functools.partial(apply_wrappers, wrappers=wrappers),
        vec_env_cls=SubprocVecEnv if vec_env == "subproc" else DummyVecEnv,
    )
    stack = cfg.env.get("frame_stack")
    return VecFrameStack(venv, n_stack=stack) if stack else venv


def _normalized(cfg: DictConfig, venv: VecEnv, normalizer: Path | None, training: bool) -> VecEnv:
    """``venv`` under ``VecNormalize`` as ``env.normalize`` says, or with saved statistics (``normalizer``).

    For evaluation (``training=False``) the statistics are frozen and rewards are left raw.
    """
    norm = cfg.env.normalize
    if normalizer is not None and normalizer.suffix == ".npz":  # data only: a received folder's statistics
        venv = load_statistics(normalizer, venv)
    elif normalizer is not None:  # VecNormalize.load, reading the pickles of older runs too
        saved = load_pickle(normalizer)
        assert isinstance(saved, VecNormalize), f"{normalizer} holds no VecNormalize statistics"
        saved.set_venv(venv)
        venv = saved
    elif norm.obs or norm.reward:
        reward = norm.reward and training
        venv = VecNormalize(venv, norm_obs=norm.obs, norm_reward=reward, gamma=cfg.algo.get("gamma", 0.99))
    if not training and isinstance(venv, VecNormalize):
        venv.training, venv.norm_reward = False, False
    return venv


def save_statistics(normalizer: VecNormalize, pickled: Path, data: Path) -> None:
    """The VecNormalize statistics as SB3 saves them (``pickled``, for plain SB3 and resumes) and as arrays
    and JSON in an ``.npz`` (``data``): what a folder that is not trusted is evaluated with, read without pickle."""
    normalizer.save(str(pickled))
    parts = _running_stats(normalizer).items()
    arrays: dict[str, Any] = {
        f"{name}.{field}": np.asarray(getattr(rms, field)) for name, rms in parts for field in RMS
    }
    about = {
        "norm_obs": normalizer.norm_obs,
        "norm_reward": normalizer.norm_reward,
        "norm_obs_keys": normalizer.norm_obs_keys,
        "clip_obs": normalizer.clip_obs,
        "clip_reward": normalizer.clip_reward,
        "gamma": normalizer.gamma,
        "epsilon": normalizer.epsilon,
    }
    with open(data, "wb") as f:
        np.savez(f, **arrays, about=np.array(json.dumps(about)))


def _running_stats(normalizer: VecNormalize) -> dict[str, Any]:
    """The normaliser's running statistics by name: ``obs`` (or ``obs.<key>`` per Dict key) and ``ret``."""
    obs = normalizer.obs_rms if normalizer.norm_obs else None
    named = {f"obs.{key}": rms for key, rms in obs.items()} if isinstance(obs, dict) else {"obs": obs}
    return {**(named if obs is not None else {}), "ret": normalizer.ret_rms}


def load_statistics(data: Path, venv: VecEnv) -> VecNormalize:
    """``venv`` under VecNormalize with the statistics of a :func:`save_statistics` ``.npz`` (no pickle read)."""
    try:
        with np.load(data, allow_pickle=False) as arrays:
            about = json.loads(str(arrays["about"]))
            normalizer = VecNormalize(venv, training=False, **about)
            for name, rms in _running_stats(normalizer).items():
                rms.mean = arrays[f"{name}.mean"].astype(np.float64)
                rms.var = arrays[f"{name}.var"].astype(np.float64)
                rms.count = float(arrays[f"{name}.count"])
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as error:
        raise UserError(
            f"{data} cannot be read as VecNormalize statistics ({type(error).__name__}: {error})",
            "restore the file from the run's original copy",
        ) from None
    return normalizer


def make_train_env(cfg: DictConfig, normalizer: Path | None = None) -> VecEnv:
    """The training envs: ``env.n_envs`` copies, then NaN checks and ``VecNormalize`` as configured.

    ``normalizer``: saved VecNormalize statistics to continue from (a resumed run).
    """
    if cfg.env.get("vectorization", "gym") == "native":  # one numpy-batched VecEnv (rlrun/make/native.py)
        venv = native.make_vec(cfg, make_wrappers(cfg.wrappers))
    else:
        venv = make_vec(cfg, cfg.env.n_envs, cfg.seed, cfg.env.vec_env)
    if cfg.check_nan:
        venv = CheckNan(venv)
    return _normalized(cfg, venv, normalizer, training=True)


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
    seed = eval_seed(cfg.seed) if seed is None else seed
    venv = make_vec(cfg, n_envs, seed, render_mode=render_mode, evaluation=True)
    return _normalized(cfg, venv, normalizer, training=False)


def eval_copies(cfg: DictConfig) -> int:
    """How many eval copies a run makes: ``eval.n_envs``, but no more than the episodes of its largest
    evaluation (a copy without an episode to run would only cost the time to make and reset it)."""
    return max(1, min(int(cfg.eval.n_envs), max(int(cfg.eval.episodes), int(cfg.eval.final_episodes))))


def ignore_stop_signals(make_env: Callable[..., Any], **kwargs: Any) -> Any:
    """Env factory for subprocess workers: ignore the stop signals there, then make the env.

    SubprocVecEnv calls the factory first thing in each worker, so the worker never dies of a Ctrl-C
    sent to the whole process group; it ends when the main process closes the vec env.
    """
    for signum in WORKER_IGNORES:
        signal.signal(signum, signal.SIG_IGN)
    return make_env(**kwargs)
