"""Every preset of the six algorithms SBX has composes with ``algo.backend=jax``, passes the checks a run makes
before training, and builds its SBX model (all of them under ``slow``; one of each kind in the default run)."""

from __future__ import annotations

import warnings
from importlib.resources import files
from pathlib import Path

import pytest
from omegaconf import DictConfig, open_dict

from rlrun.checks import preflight, rules
from rlrun.config.errors import UserError, raise_if
from rlrun.make import models, vec_envs
from tests.rlrun.helpers import compose_config

CONF = Path(str(files("rlrun.conf")))
SBX_ALGOS = ("sac", "td3", "tqc", "crossq", "dqn", "ppo", "her", "her_tqc")
ALGO_NAMES = sorted((p.stem for p in (CONF / "algo").glob("*.yaml")), key=len, reverse=True)


def _split(preset: str) -> tuple[str, str]:
    """``halfcheetah_ppo`` -> ``("halfcheetah", "ppo")``, ``fetchreach_her_tqc`` -> ``("fetchreach", "her_tqc")``."""
    for algo in ALGO_NAMES:
        env = preset.removesuffix(f"_{algo}")
        if env != preset and (CONF / "env" / f"{env}.yaml").is_file():
            return env, algo
    raise AssertionError(preset)


PRESETS = sorted(p.stem for p in (CONF / "tuned").glob("*.yaml") if _split(p.stem)[1] in SBX_ALGOS)
# GridWorld observes a Dict (position and goal): SBX's PPO and DQN take none (the torch presets train it)
REFUSED = {"gridworld_dqn", "gridworld_ppo"}
# one preset of each kind (the six algorithms build in test_jax_models.py): a torch activation (ReLU), HER on TQC
# with n_critics, a CNN on Atari
BUILT_IN_THE_DEFAULT_RUN = ["halfcheetah_ppo", "fetchreach_her_tqc", "pong_dqn"]


def _config(preset: str) -> DictConfig:
    env, algo = _split(preset)
    cfg = compose_config(f"env={env}", f"algo={algo}", "algo.backend=jax")
    with open_dict(cfg):
        if "buffer_size" in cfg.algo:
            cfg.algo.buffer_size = 1000  # the networks are what is checked; the replay buffer's size changes none
    return cfg


def _checked(cfg: DictConfig) -> None:
    """The checks of a run before training: config, then the fit to one env copy's spaces."""
    preflight.config_checks(cfg)
    model_cls = models.model_class(cfg)
    algo_cls = preflight.algorithm_checks(cfg, model_cls)
    probe = vec_envs.make_env(cfg)
    try:
        raise_if(rules.fit_problems(cfg, probe, algo_cls, models.uses_her(cfg), model_cls))
    finally:
        probe.close()


def _built(cfg: DictConfig) -> object:
    venv = vec_envs.make_vec(cfg, cfg.env.n_envs, cfg.seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # budget warnings: the budget is not what is checked here
            return models.make_model(cfg, venv)
    finally:
        venv.close()


def test_there_are_presets_of_every_sbx_algorithm() -> None:
    assert {_split(p)[1] for p in PRESETS} == set(SBX_ALGOS)
    assert set(PRESETS) >= REFUSED | set(BUILT_IN_THE_DEFAULT_RUN)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_composes_and_passes_the_checks_with_jax(preset: str) -> None:
    cfg = _config(preset)
    if preset in REFUSED:
        with pytest.raises(UserError, match="has no MultiInputPolicy"):
            _checked(cfg)
    else:
        _checked(cfg)


@pytest.mark.parametrize("preset", BUILT_IN_THE_DEFAULT_RUN)
def test_one_preset_of_each_kind_builds_its_sbx_model(preset: str) -> None:
    model = _built(_config(preset))
    assert type(model).__module__.startswith("sbx.")


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(set(PRESETS) - REFUSED))
def test_every_preset_builds_its_sbx_model(preset: str) -> None:
    cfg = _config(preset)
    _checked(cfg)
    assert type(_built(cfg)).__module__.startswith("sbx.")


# SB3 arguments SBX's class lacks that rlrun passes on in SBX's own terms (rlrun/make/jax_models.py: arguments)
HONOURED = {("stable_baselines3.DQN", "max_grad_norm")}


def _other_value(value: object) -> object:
    """A value unlike ``value``: what a user could give instead of SB3's default."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    return "something else"


# one preset of each of the six algorithms in the default run, every preset under `slow`
WALKED_IN_THE_DEFAULT_RUN = {"pendulum_sac", "pendulum_td3", "pendulum_tqc", "pendulum_crossq", "cartpole_dqn"}
WALKED_IN_THE_DEFAULT_RUN |= {"cartpole_ppo"}


@pytest.mark.parametrize(
    "preset",
    [
        p if p in WALKED_IN_THE_DEFAULT_RUN else pytest.param(p, marks=pytest.mark.slow)
        for p in PRESETS
        if p not in REFUSED
    ],
)
def test_every_sb3_argument_sbx_lacks_is_honoured_or_refused_when_given(preset: str) -> None:
    """Nothing that changes training is dropped silently: an argument SBX's class does not take is passed on in
    SBX's terms, or left out only at SB3's default, which SBX's algorithm matches (docs/jax.md), and refused at any
    other value."""
    import inspect

    from hydra.utils import get_class

    from rlrun.make import jax_models

    cfg = _config(preset)
    target = str(cfg.algo.get("_target_"))
    sbx_cls = models.model_class(cfg)
    sbx = inspect.signature(sbx_cls.__init__).parameters
    sb3 = inspect.signature(get_class(target).__init__).parameters
    lacking = [key for key in cfg.algo if key in sb3 and key not in sbx and key not in ("policy", "env")]
    for key in lacking:
        if (target, key) in HONOURED:
            continue
        assert cfg.algo[key] == sb3[key].default, f"{preset}: algo.{key} is not SB3's default and not refused"
        changed = cfg.copy()
        with open_dict(changed):
            changed.algo[key] = _other_value(sb3[key].default)
        assert any(f"algo.{key}=" in problem for problem, _ in jax_models.problems(changed, sbx_cls)), key
