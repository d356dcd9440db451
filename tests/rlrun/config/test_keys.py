"""The one list of keys that do not change what is trained: config_hash, and the parameters themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from omegaconf import DictConfig, OmegaConf, open_dict
from stable_baselines3 import PPO

from rlrun.config.keys import config_hash, is_training_key, override_key, override_value, training_overrides
from rlrun.run.training import train


def changed(cfg: DictConfig, **values: object) -> DictConfig:
    cfg = cfg.copy()
    with open_dict(cfg):
        for key, value in values.items():
            node, _, leaf = key.replace("__", ".").rpartition(".")
            target = cfg
            for part in node.split(".") if node else []:
                target = target[part]
            target[leaf] = value
    return cfg


@pytest.mark.parametrize(
    "values",
    [
        {"seed": 7},
        {"progress_bar": "true"},
        {"eval__every": 3, "eval__episodes": 1, "eval__n_envs": 2},
        {"snapshot__every": 5, "snapshot__keep": 1, "snapshot__replay_buffer": "none"},
        {"check_nan": True},
        {"tune__trials": 99},
        {"sweep": "mine"},
    ],
    ids=["seed", "progress_bar", "eval", "snapshot", "check_nan", "tune", "sweep"],
)
def test_keys_that_do_not_change_training_leave_the_hash_alone(
    tiny_config: Callable[..., DictConfig], values: dict[str, object]
) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo")
    assert config_hash(changed(cfg, **values)) == config_hash(cfg)


@pytest.mark.parametrize(
    "values",
    [{"torch_threads": 2}, {"total_timesteps": 999}, {"algo__gamma": 0.5}, {"env__n_envs": 2}, {"fused_adam": False}],
    ids=["torch_threads", "total_timesteps", "algo", "env", "fused_adam"],
)
def test_keys_that_change_training_change_the_hash(
    tiny_config: Callable[..., DictConfig], values: dict[str, object]
) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo")
    assert config_hash(changed(cfg, **values)) != config_hash(cfg)


def test_a_run_made_before_fused_adam_keeps_its_hash(tiny_config: Callable[..., DictConfig]) -> None:
    """fused_adam=false trains as runs did before the key: their config, without it, hashes alike."""
    cfg = tiny_config("env=gridworld", "algo=ppo", "fused_adam=false")
    container = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(container, dict) and container.pop("fused_adam") is False
    assert config_hash(container) == config_hash(cfg)


def test_training_overrides_drop_what_does_not_change_training() -> None:
    overrides = ["env=gridworld", "seed=3", "eval.every=5", "+algo.gamma=0.9", "hydra/launcher=joblib", "~tuned"]
    assert training_overrides(overrides) == ["env=gridworld", "+algo.gamma=0.9", "~tuned"]
    assert is_training_key("torch_threads") and not is_training_key("snapshot.keep")


def test_runs_differing_only_in_such_keys_train_bit_identical_parameters(
    tmp_path: Path, tiny_config: Callable[..., DictConfig]
) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo")
    other = changed(cfg, eval__every=64, eval__episodes=3, snapshot__every=32, check_nan=True)
    train(cfg, tmp_path / "a")
    train(other, tmp_path / "b")
    params = [PPO.load(tmp_path / run / "model.zip", device="cpu").policy.state_dict() for run in ("a", "b")]
    assert params[0].keys() == params[1].keys()
    assert all(torch.equal(params[0][k], params[1][k]) for k in params[0])
    hashes = [(tmp_path / run / "run.json").read_text().split('"config_hash": "')[1][:64] for run in ("a", "b")]
    assert hashes[0] == hashes[1]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (1e-05, "1e-05"),
        (64, "64"),
        ("auto_0.1", "'auto_0.1'"),
        ("/tmp/it's a b=c,d", r"'/tmp/it\'s a b=c,d'"),
        ([64, 64], "[64,64]"),
        ({"a": 1, "b": [None, "x"]}, "{a:1,b:[null,'x']}"),
    ],
    ids=["null", "bool", "float", "int", "string", "path", "list", "mapping"],
)
def test_a_value_is_written_in_hydras_override_grammar(value: object, text: str) -> None:
    assert override_value(value) == text


def test_hydra_reads_back_the_value_written(tmp_path: Path) -> None:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    folder = str(tmp_path / "it's [a] {b}, c=d")
    (parsed,) = OverridesParser.create().parse_overrides([f"hydra.sweep.dir={override_value(folder)}"])
    assert parsed.value() == folder


@pytest.mark.parametrize(
    ("override", "key"),
    [("algo.gamma=0.9", "algo.gamma"), ("+algo.x=1", "algo.x"), ("++a.b=c=d", "a.b"), ("~tuned", "tuned")],
)
def test_the_key_of_an_override(override: str, key: str) -> None:
    assert override_key(override) == key
