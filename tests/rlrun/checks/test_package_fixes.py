"""Fixes that keep the data and alarms that fit (issue 53): a scalar (or a Dict) inside a Dict observation gets
``wrappers=[flatten]``, which keeps every value, not a FilterObservation that drops it; an env with a
``compute_reward`` method of another contract than goal envs' (Meta-World's) is no goal env for SB3's checker either
(rlrun/checks/rules.py, rlrun/checks/env_checks.py)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from rlrun.checks import env_checks, rules
from rlrun.make import vec_envs
from rlrun.run.training import train
from tests.rlrun.checks import package_envs
from tests.rlrun.helpers import QUICK_BUDGET, compose_check, compose_config

PACKAGES = f"env.packages=[{package_envs.MODULE}]"
SCALAR = spaces.Box(-1.0, 1.0, (), np.float32)
VECTOR = spaces.Box(-1.0, 1.0, (2,), np.float32)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Dict({"position": VECTOR, "height": SCALAR}),
        spaces.Dict({"position": VECTOR, "body": spaces.Dict({"height": SCALAR, "speed": VECTOR})}),
    ],
    ids=["scalar-in-dict", "nested-dict-with-a-scalar"],
)
def test_a_scalar_or_a_dict_inside_a_dict_is_flattened_not_dropped(space: spaces.Space) -> None:
    [(problem, fix)] = rules.observation_problems("my/Env-v0", space)
    assert "SB3 cannot take the observations of my/Env-v0" in problem
    assert fix.startswith("add wrappers=[flatten]") and "FilterObservation" not in fix


def test_text_beside_a_scalar_is_dropped_and_the_rest_flattened() -> None:
    space = spaces.Dict({"position": VECTOR, "height": SCALAR, "note": spaces.Text(8)})
    [(problem, fix)] = rules.observation_problems("my/Env-v0", space)
    assert "observation['height']" in problem and "observation['note']" in problem
    assert "drop note with Gymnasium's FilterObservation" in fix and "filter_keys: [height, position]" in fix
    assert "then wrappers=[<name>, flatten]" in fix


def test_a_scalar_in_a_dict_trains_with_the_flatten_the_fix_names(tmp_path: Path) -> None:
    overrides = ["env=gym", "env.id=pkgtest/ScalarInDict-v0", PACKAGES, "wrappers=[flatten]", "algo=ppo"]
    final = train(compose_config(*overrides, "algo.n_steps=32", "algo.batch_size=32", *QUICK_BUDGET), tmp_path)
    assert final["episodes"] == 1


@pytest.mark.parametrize("env_id", ["OwnComputeReward-v0", "GoalShaped-v0"])
def test_sb3s_check_raises_no_goal_env_alarm_for_an_env_that_is_no_goal_env(env_id: str) -> None:
    cfg = compose_check("env=gym", f"env.id=pkgtest/{env_id}", PACKAGES)
    with closing(vec_envs.make_env(cfg)) as env:
        assert not rules.is_goal_env(env)
        result = env_checks.run_checker("SB3 check_env", env_checks.CHECKERS["SB3 check_env"], env)
    assert result.status == env_checks.PASS
    if env_id == "OwnComputeReward-v0":  # what SB3's checker would have taken it for is said
        assert any("checked it as a plain env" in note for note in result.notes)


def test_a_goal_env_is_still_checked_as_one() -> None:
    with closing(vec_envs.make_env(compose_check("env=pointgoal"))) as env:
        result = env_checks.run_checker("SB3 check_env", env_checks.CHECKERS["SB3 check_env"], env)
    assert result.status == env_checks.PASS and any("GoalEnv" in note for note in result.notes)
