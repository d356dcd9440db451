"""The rules checked before heavy work (rlrun/checks/rules.py), called directly: ranges, devices, the space rule.

How every run applies them is in test_preflight.py; the algorithm's arguments are in test_constructor.py."""

from __future__ import annotations

import pytest
import torch
from omegaconf import open_dict

from rlrun.checks import rules
from rlrun.config.errors import UserError, raise_if
from rlrun.make import models, vec_envs
from tests.rlrun.helpers import compose_config


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("total_timesteps=0", "total_timesteps=0 must be a positive integer"),
        ("total_timesteps=-5", "total_timesteps=-5 must be a positive integer"),
        ("eval.episodes=0", "eval.episodes=0 must be a positive integer"),
        ("env.n_envs=0", "env.n_envs=0 must be a positive integer"),
        ("torch_threads=0", "torch_threads=0 must be a positive integer"),
        ("seed=-1", "seed=-1 is outside numpy's seeding range, 0 to 2**32 - 1 (4294967295)"),
        ("device=gpu", "device=gpu is not one of cpu, cuda, auto"),
        ("env.vec_env=threads", "env.vec_env=threads is not one of dummy, subproc"),
        ("snapshot.replay_buffer=some", "snapshot.replay_buffer=some is not one of latest, all, none"),
        ("progress_bar=maybe", "progress_bar=maybe is not one of auto, true, false"),
    ],
)
def test_out_of_range_values(override: str, message: str) -> None:
    problems = rules.range_problems(compose_config(override))
    assert [p for p, _ in problems] == [message]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(UserError) as caught:
        raise_if(rules.range_problems(compose_config("total_timesteps=0", "eval.episodes=0")))
    assert "2 problems" in str(caught.value) and str(caught.value).count("fix:") == 2


def test_gym_blank_without_id() -> None:
    problems = rules.range_problems(compose_config("env=gym"))
    assert problems[0][0] == "env.id is not set" and "env.id=" in problems[0][1]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["algo.gamma=1.5"], "algo.gamma=1.5 is out of range: it must be in (0, 1]"),
        (["algo.gamma=0"], "algo.gamma=0 is out of range: it must be in (0, 1]"),
        (["algo.learning_rate=-0.001"], "algo.learning_rate=-0.001 is out of range: it must be > 0"),
        (["algo.batch_size=0"], "algo.batch_size=0 is out of range: it must be >= 1"),
        (["algo.gae_lambda=1.5"], "algo.gae_lambda=1.5 is out of range: it must be in [0, 1]"),
        (["algo=sac", "algo.buffer_size=0"], "algo.buffer_size=0 is out of range: it must be >= 1"),
        (["algo=sac", "algo.tau=0"], "algo.tau=0 is out of range: it must be in (0, 1]"),
        (["algo=sac", "algo.gradient_steps=0"], "algo.gradient_steps=0 is out of range: it must be -1 or >= 1"),
        (
            ["algo=dqn", "algo.exploration_fraction=2"],
            "algo.exploration_fraction=2 is out of range: it must be in [0, 1]",
        ),
    ],
    ids=lambda value: value[-1] if isinstance(value, list) else "",
)
def test_algo_values_outside_their_documented_range(overrides: list[str], message: str) -> None:
    problems = rules.range_problems(compose_config(*overrides))
    assert [p for p, _ in problems] == [message]
    assert problems[0][1].startswith(f"set e.g. {message.split('=')[0]}=")


def test_schedules_auto_and_sb3_special_values_are_in_range() -> None:
    cfg = compose_config("env=pointenv", "algo=sac", "algo.gradient_steps=-1")  # ent_coef: auto
    with open_dict(cfg):
        cfg.algo.learning_rate = {"_target_": "stable_baselines3.common.utils.ConstantSchedule", "val": 1e-3}
    assert rules.range_problems(cfg) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_without_a_gpu(device: str) -> None:
    problems = rules.range_problems(compose_config(f"device={device}"))
    assert problems == [(f"device={device} but torch finds no CUDA GPU here", "use device=cpu (or device=auto)")]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_index_beyond_the_gpus() -> None:
    assert rules.range_problems(compose_config("device=cuda:0")) == []
    [(problem, fix)] = rules.range_problems(compose_config("device=cuda:99"))
    assert "device=cuda:99 but torch finds" in problem and fix.startswith("use device=cuda:0")


@pytest.mark.parametrize(
    ("gpus", "fix"), [(1, "use device=cuda:0 (or device=cuda)"), (4, "use device=cuda:0 .. cuda:3")]
)
def test_an_index_beyond_the_gpus_names_those_there_are(monkeypatch: pytest.MonkeyPatch, gpus: int, fix: str) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # as on a machine with `gpus` GPUs
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    one_too_many = [("device=cuda:1 but torch finds 1 GPU(s) here", fix)]
    assert rules.device_problems("cuda:1") == ([] if gpus > 1 else one_too_many)
    assert rules.device_problems("cuda:7") == [(f"device=cuda:7 but torch finds {gpus} GPU(s) here", fix)]


def test_auto_device_needs_no_gpu() -> None:
    assert rules.range_problems(compose_config("device=auto")) == []


@pytest.mark.parametrize(("env", "algo"), [("gridworld", "sac"), ("pointenv", "dqn"), ("pointgoal", "her")])
def test_algo_fits_is_the_space_rule_as_yes_or_no(env: str, algo: str) -> None:
    cfg = compose_config(f"env={env}", f"algo={algo}")
    made, algo_cls = vec_envs.make_env(cfg), models.algo_class(cfg)
    fits = rules.algo_fits(made, algo_cls, models.uses_her(cfg))
    assert fits == (rules.space_problems(made, algo_cls, models.uses_her(cfg)) == [])
    assert fits == (algo == "her")
