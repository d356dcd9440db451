"""A budget that trains less than the algorithm's unit of work, or that evaluation outspends, is said at the start with
a fix that is an override: applying the fix's first choice to the same command line silences the warning."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from gymnasium import spaces
from omegaconf import DictConfig

from rlrun.checks import rules
from rlrun.checks.rules import EnvFacts
from rlrun.config import budget
from rlrun.config.errors import UserError
from rlrun.make import models
from rlrun.run import training
from tests.rlrun.helpers import compose_check


def env_with_limit(steps: int | None) -> EnvFacts:
    box = spaces.Box(-1, 1, (2,))
    return EnvFacts(id="x", observation_space=box, action_space=box, max_episode_steps=steps, goal_env=False)


def warnings_for(overrides: list[str], limit: int | None) -> list[tuple[str, str]]:
    """The budget warnings of the command line ``overrides`` (its budget fitted as a run fits it)."""
    cfg, _ = budget.fit_to_budget(compose_check(*overrides), overrides)
    assert isinstance(cfg, DictConfig)
    return rules.budget_warnings(cfg, models.algo_class(cfg), env_with_limit(limit))


def first_fix(fix: str) -> list[str]:
    """The overrides of a fix's first choice: ``algo.n_steps=128 (8 updates ...), or ...`` -> ``[algo.n_steps=128]``."""
    return re.findall(r"\S+=\S+", re.sub(r"\(.*?\)", "", fix.split(", or ")[0]))


@pytest.mark.parametrize(
    ("overrides", "limit", "said"),
    [
        (["env=lunarlander", "algo=ppo", "total_timesteps=16384"], 1000, "is one rollout"),  # 16 x 1,024: one update
        (["env=cartpole", "algo=ppo", "total_timesteps=256"], 500, "is larger than total_timesteps=256"),
        (["env=halfcheetah", "algo=sac", "total_timesteps=3000"], 1000, "may step the eval env 50,000 times"),
        (["env=cartpole", "algo=ppo", "algo.batch_size=100"], 500, "truncated minibatch"),
    ],
    ids=["one-rollout", "less-than-a-rollout", "evaluation-outspends", "truncated-minibatch"],
)
def test_a_warning_names_its_cause_and_its_fix_silences_it(overrides: list[str], limit: int, said: str) -> None:
    [(problem, fix)] = [w for w in warnings_for(overrides, limit) if said in w[0]]
    fixed = first_fix(fix)
    assert fixed and all(key.split("=")[0] in problem or key.startswith(("algo.", "eval.")) for key in fixed)
    assert not [w for w in warnings_for(overrides + fixed, limit) if said in w[0]], fix


def test_a_budget_above_one_rollout_and_affordable_evaluation_warn_of_nothing() -> None:
    assert warnings_for(["env=lunarlander", "algo=ppo", "total_timesteps=16400", "eval.every=8200"], 1000) == []
    assert warnings_for(["env=cartpole", "algo=ppo"], 500) == []  # the preset at its own budget


def test_without_the_env_evaluation_is_not_guessed() -> None:
    cfg = compose_check("env=halfcheetah", "algo=sac", "total_timesteps=3000", "eval.every=300")
    assert rules.budget_warnings(cfg, models.algo_class(cfg)) == []


def test_no_banner_before_a_refusal(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The preset banner says what starts: a config refused before training prints none."""
    cfg = compose_check("env=gridworld", "algo=ppo", "algo.gamma=1.5")
    meta = {"preset": "gridworld_ppo", "algo": "ppo", "overrides": ["algo.gamma=1.5"]}
    with caplog.at_level(logging.INFO, logger="rlrun"), pytest.raises(UserError, match="algo.gamma=1.5"):
        training.train(cfg, tmp_path / "run", meta)
    assert not [r for r in caplog.records if "preset" in r.getMessage()]
