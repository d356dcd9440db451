"""Structured config schemas: Hydra checks the types of the run keys and env files as it composes.

OmegaConf checks types, not ranges (it never calls ``__post_init__``), so ranges and
compatibility are checked afterwards by :mod:`rlrun.checks.rules`. Algorithm arguments are free-form
here and checked against the SB3 constructor's signature there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import II, MISSING


@dataclass
class NormalizeConfig:
    """SB3's ``VecNormalize`` switches."""

    obs: bool = False
    reward: bool = False


@dataclass
class EnvConfig:
    """The ``env`` group: which Gymnasium env, how many copies and how they are vectorised."""

    id: str = MISSING
    n_envs: int = 1
    vec_env: str = "dummy"
    max_episode_steps: int | None = None
    vectorization: str = "gym"
    kwargs: dict[str, Any] = field(default_factory=dict)
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    # what an env family needs (conf/env/<family or task>.yaml); the defaults change nothing and are left out
    # of config_hash (rlrun.config.keys.NEW_ENV_DEFAULTS), so runs made before these keys keep their hash
    extra: str | None = None  # the pip extra that installs the env's package: rlrun[<extra>]
    wrappers: dict[str, Any] = field(default_factory=dict)  # the family's wrappers, applied before `wrappers`
    frame_stack: int | None = None  # stack this many observations over the vectorised env (VecFrameStack)
    threshold: float | None = None  # the score that counts as solved where the registration declares none
    # keys that do not change training (rlrun.config.keys.NON_TRAINING_SUBKEYS); docs/envs.md, "Any env"
    packages: list[str] = field(default_factory=list)  # modules imported before the env is made (their ids)
    success_key: str = "is_success"  # the info key that reports success at an episode's end
    name: str | None = None  # names run folders, run.json's env and table groups (default: the config's name)


@dataclass
class EvalConfig:
    """Periodic and final evaluation on the separate eval env."""

    every: int = II("rlrun.eval_every:${total_timesteps}")  # a tenth of the budget (rlrun.config.budget)
    episodes: int = 5
    final_episodes: int = II("rlrun.final_episodes:${total_timesteps}")  # 5 per 100k steps of budget, 5 to 50
    n_envs: int = 5  # divides episodes (5) and the default final_episodes: no copy idles
    deterministic: bool = True  # false: sample actions, as RL Zoo evaluates MiniGrid and Atari


@dataclass
class SnapshotConfig:
    """Periodic snapshots under ``<run_dir>/snapshots``."""

    every: int = 10_000
    keep: int = 3
    replay_buffer: str = "latest"


@dataclass
class TuneConfig:
    """Hyperparameter tuning with Optuna (``rlrun-tune``); the search space is the ``search_space`` group."""

    trials: int = 20
    seeds: int = 3
    validate_seeds: int = 5
    objective: str = "iqm"
    pruner: str = "median"
    sampler: str = "tpe"
    study: str | None = None
    storage: str | None = None
    n_jobs: int = 1
    report: bool = False


@dataclass
class RunConfig:
    """The whole composed config; ``algo`` and ``wrappers`` are validated by rlrun, not here."""

    env: EnvConfig = field(default_factory=EnvConfig)
    algo: dict[str, Any] = field(default_factory=dict)
    wrappers: dict[str, Any] = field(default_factory=dict)
    logger: dict[str, Any] = field(default_factory=dict)  # conf/logger/: tensorboard, mlflow, wandb, csv
    seed: int = 0
    total_timesteps: int = 100_000
    torch_threads: int = 1
    device: str = "cpu"
    # auto, true or false (a bool from the command line): torch's fused Adam for the policy's optimisers
    # (rlrun.make.optimizers)
    fused_adam: Any = "auto"
    progress_bar: str = "auto"
    progress_every: float = 60.0  # seconds between plain progress lines without a progress bar; 0: none
    check_nan: bool = False
    resume: str | None = None
    sweep: str | None = None
    sweep_yes: bool = False  # confirms a sweep of more than rlrun.sweep.size.CONFIRM_ABOVE jobs without a terminal
    eval: EvalConfig = field(default_factory=EvalConfig)
    snapshot: SnapshotConfig = field(default_factory=SnapshotConfig)
    tune: TuneConfig = field(default_factory=TuneConfig)
    benchmark: dict[str, Any] = field(default_factory=dict)  # conf/benchmark/zoo.yaml's parts; never trained on


def register() -> None:
    """Store the schema as ``rlrun_schema``, the first entry of ``conf/config.yaml``'s defaults."""
    ConfigStore.instance().store(name="rlrun_schema", node=RunConfig)
    ConfigStore.instance().store(name="rlrun_check_schema", node=CheckConfig)  # conf/check.yaml (rlrun-check)


@dataclass
class CheckConfig(RunConfig):
    """``rlrun-check``'s config: the run's keys, plus the length of the random rollout and the simulation."""

    steps: int = 1000  # env steps of the random-action rollout check
    sim: int = 0  # > 0: print a random-action episode step by step for this many steps instead of checking
    render: str | None = None  # with sim: ansi prints the frames, human shows them in a window
