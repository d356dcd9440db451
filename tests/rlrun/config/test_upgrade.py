"""Configs and pickles of runs written before the envs became ``rlrun.envs`` (tests/fixtures/aaa907b/)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from gymnasium.envs.registration import EnvSpec
from omegaconf import OmegaConf

from rlrun.config.keys import config_hash
from rlrun.config.upgrade import legacy_name, load_config, load_pickle, upgrade, upgrade_name
from tests.rlrun.helpers import compose_config

OLD = Path(__file__).resolve().parents[2] / "fixtures" / "aaa907b"
OLD_RUNS = sorted(path.parent for path in OLD.rglob("run.json"))
INTERRUPTED = OLD / "runs" / "gridworld-ppo" / "interrupted"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("envs.wrappers.RelativePosition", "rlrun.envs.wrappers.RelativePosition"),
        ("envs.RelativePosition", "rlrun.envs.RelativePosition"),
        ("envs.gridworld:GridWorldEnv", "rlrun.envs.gridworld:GridWorldEnv"),
        ("envs.batched.gridworld", "rlrun.envs.batched.gridworld"),
        ("envs", "rlrun.envs"),
        ("envs:rlrun/GridWorld-v0", "rlrun.envs:rlrun/GridWorld-v0"),
        ("envs.my_env.MyEnv", "envs.my_env.MyEnv"),  # a user's own package called envs is left alone
        ("envs:MyEnv-v0", "envs:MyEnv-v0"),
        ("envsfoo.wrappers.X", "envsfoo.wrappers.X"),
        ("gymnasium.wrappers.FlattenObservation", "gymnasium.wrappers.FlattenObservation"),
        ("rlrun/GridWorld-v0", "rlrun/GridWorld-v0"),
    ],
    ids=lambda text: text,
)
def test_old_module_names_are_upgraded_and_spelled_back(old: str, new: str) -> None:
    assert upgrade_name(old) == new
    assert legacy_name(new) == old


def test_an_old_config_is_upgraded_in_memory_only() -> None:
    text = (INTERRUPTED / "config.yaml").read_text()
    cfg = load_config(INTERRUPTED)
    assert cfg.wrappers.relative_position._target_ == "rlrun.envs.wrappers.RelativePosition"
    assert (INTERRUPTED / "config.yaml").read_text() == text and "envs.wrappers.RelativePosition" in text


def test_upgrade_returns_a_copy_and_fills_keys_newer_than_the_run() -> None:
    old = OmegaConf.load(INTERRUPTED / "config.yaml")
    del old.eval.n_envs  # a run from before eval.n_envs: it evaluated on one copy
    before = OmegaConf.to_yaml(old)
    upgraded = upgrade(old)
    assert upgraded.eval.n_envs == 1
    assert OmegaConf.to_yaml(old) == before  # the loaded config is not changed


def test_a_run_written_before_fused_adam_goes_on_with_torchs_default_adam() -> None:
    assert "fused_adam" not in (INTERRUPTED / "config.yaml").read_text()
    assert load_config(INTERRUPTED).fused_adam is False  # not today's default, auto


def test_a_current_config_comes_back_equal() -> None:
    cfg = compose_config("env=gridworld", "wrappers=[relative_position,scale_reward]")
    resolved = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
    assert upgrade(resolved) == resolved


@pytest.mark.parametrize("run_dir", OLD_RUNS, ids=lambda path: str(path.relative_to(OLD)))
def test_an_upgraded_old_config_hashes_as_its_run_json_records(run_dir: Path) -> None:
    recorded = json.loads((run_dir / "run.json").read_text())["config_hash"]
    assert config_hash(load_config(run_dir)) == recorded


@pytest.mark.parametrize("run_dir", OLD_RUNS, ids=lambda path: str(path.relative_to(OLD)))
def test_the_same_job_composed_today_hashes_as_the_old_run(run_dir: Path) -> None:
    record = json.loads((run_dir / "run.json").read_text())
    overrides = [o for o in record["overrides"] if not o.startswith(("sweep=", "hydra."))]
    cfg = compose_config(*overrides, "fused_adam=false")  # the Adam of its day
    assert cfg.wrappers.relative_position._target_ == "rlrun.envs.wrappers.RelativePosition"
    assert config_hash(cfg) == record["config_hash"]
    assert config_hash(compose_config(*overrides)) != record["config_hash"]  # today's default trains otherwise


def test_old_snapshot_state_unpickles_to_todays_env_classes() -> None:
    state = load_pickle(INTERRUPTED / "snapshots" / "step-0000000512" / "state.pkl")
    env = state["train_env"]["envs"][0]
    assert type(env).__module__ == "rlrun.envs.wrappers"
    assert type(env.unwrapped).__module__ == "rlrun.envs.gridworld"
    assert type(env.unwrapped.spec) is EnvSpec  # the stand-in used while unpickling is gone
    assert env.unwrapped.spec.entry_point == "rlrun.envs.gridworld:GridWorldEnv"


def test_old_vecnormalize_statistics_unpickle() -> None:
    from stable_baselines3.common.vec_env import VecNormalize

    stats = load_pickle(INTERRUPTED / "snapshots" / "step-0000000512" / "vecnormalize.pkl")
    assert isinstance(stats, VecNormalize) and stats.norm_obs and stats.norm_reward


def test_rlrun_table_reads_old_configs_in_todays_spelling() -> None:
    from rlrun.table.runs import find_runs

    runs = find_runs([OLD])
    assert len(runs) == len(OLD_RUNS)
    assert {run.value("wrappers.relative_position._target_") for run in runs} == {
        "rlrun.envs.wrappers.RelativePosition"
    }


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("rlrun.build.nan", "rlrun.make.nan"),
        ("rlrun.build.envs", "rlrun.make.vec_envs"),
        ("rlrun.process.signals", "rlrun.make.vec_envs"),  # the workers' factory moved beside the envs it makes
        ("rlrun.process.gc_pause", "rlrun.startup.gc_pause"),
    ],
    ids=["nan", "envs", "signals", "startup"],
)
def test_pickles_naming_moved_modules_load_as_todays(old: str, new: str) -> None:
    import importlib
    import pickle

    name = {"rlrun.make.nan": "CheckNan", "rlrun.make.vec_envs": "ignore_stop_signals"}.get(new, "pause")
    if old == "rlrun.build.envs":
        name = "eval_seed"
    obj = getattr(importlib.import_module(new), name)
    data = pickle.dumps(obj, protocol=0)  # protocol 0 writes module paths as text lines
    assert f"{new}\n{name}".encode() in data
    old_data = data.replace(f"{new}\n".encode(), f"{old}\n".encode())
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(old_data)
    assert load_pickle(io.BytesIO(old_data)) is obj
