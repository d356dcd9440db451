"""The search spaces of sb3-contrib's algorithms (conf/search_space/): each composes, passes its own checks (every
value against the config and the constructor), and one sampled trial's overrides make a config every check of a
run accepts, on a throwaway env and model."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from rlrun.run import dry_run
from rlrun.tune import space
from tests.rlrun.helpers import compose_config

ROOT = Path(__file__).resolve().parents[3]
SPACES = {
    "tqc": "pendulum",
    "crossq": "pendulum",
    "trpo": "cartpole",
    "qrdqn": "cartpole",
    "ars": "cartpole",
    "recurrent_ppo": "cartpole",
    "her_tqc": "pointgoal",
}
# Each nested choice (policy_kwargs) is checked by building a model: HER's buffer allocates all of buffer_size at once
SMALLER = {"her_tqc": ["algo.buffer_size=10000"]}


@pytest.mark.parametrize(("algo", "env"), SPACES.items(), ids=SPACES.keys())
def test_each_contrib_search_space_passes_its_checks_and_a_trial_passes_a_runs_checks(algo: str, env: str) -> None:
    assert (ROOT / "conf" / "search_space" / f"{algo}.yaml").read_text().startswith("# Search space for ")
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        base = compose("tune", overrides=[f"env={env}", f"algo={algo}", *SMALLER.get(algo, [])])
    params = space.parse_space(OmegaConf.to_container(base.search_space), f"search_space={algo}")
    space.check_against(params, base)
    assert len(params) >= 3 and all(param.key.startswith("algo.") for param in params)

    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    overrides = [space.override(base, param.key, param.suggest(trial)) for param in params]  # as rlrun-tune
    cfg = compose_config(f"env={env}", f"algo={algo}", *SMALLER.get(algo, []), *overrides)
    for param in params:
        assert OmegaConf.select(cfg, param.key) is not None, param.key
    dry_run.preflight(cfg)  # ranges, arguments, fit and a throwaway model
