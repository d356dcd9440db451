"""The fit rules for sb3-contrib's algorithms (rlrun/checks/rules.py): each is refused on actions it cannot take,
with a fix naming the algo options that fit; the policy comes from the class's ``policy_aliases``; a class without a
policy for the observations is refused before training."""

from __future__ import annotations

import pytest

from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.run import dry_run
from tests.rlrun.helpers import compose_config


@pytest.mark.parametrize(
    ("env", "algo", "needs", "fits"),
    [
        ("pendulum", "qrdqn", "Discrete actions", ["crossq", "recurrent_ppo", "tqc", "trpo", "ars"]),
        ("cartpole", "tqc", "Box actions", ["qrdqn", "recurrent_ppo", "trpo", "ars"]),
        ("cartpole", "crossq", "Box actions", ["qrdqn"]),
    ],
)
def test_a_contrib_algorithm_on_actions_it_cannot_take_is_refused_naming_those_that_fit(
    env: str, algo: str, needs: str, fits: list[str]
) -> None:
    with pytest.raises(UserError, match=needs) as refused:
        dry_run.preflight(compose_config(f"env={env}", f"algo={algo}", "~tuned"))
    assert all(f"algo={name}" in str(refused.value.fix) for name in fits), refused.value.fix


@pytest.mark.parametrize(
    ("env", "algo", "policy"),
    [
        ("cartpole", "recurrent_ppo", "MlpLstmPolicy"),
        ("pointgoal", "recurrent_ppo", "MultiInputLstmPolicy"),
        ("cartpole", "ppo", "MlpPolicy"),  # SB3's own names are unchanged
        ("pointgoal", "tqc", "MultiInputPolicy"),
        ("cartpole", "ars", "MlpPolicy"),
    ],
)
def test_the_policy_is_the_class_s_name_for_the_observations(env: str, algo: str, policy: str) -> None:
    cfg = compose_config(f"env={env}", f"algo={algo}", "~tuned")
    assert dry_run.preflight(cfg) == policy == models.policy_for(cfg, vec_envs.make_env(cfg).observation_space)


def test_recurrent_ppo_on_dict_observations_takes_its_own_multi_input_policy_only() -> None:
    assert dry_run.preflight(compose_config("env=pointgoal", "algo=recurrent_ppo", "algo.policy=MultiInputLstmPolicy"))
    with pytest.raises(UserError, match="MultiInputLstmPolicy is chosen"):
        dry_run.preflight(compose_config("env=pointgoal", "algo=recurrent_ppo", "algo.policy=MlpLstmPolicy"))


def test_crossq_on_dict_observations_is_refused_before_training() -> None:
    with pytest.raises(UserError, match="CrossQ has no MultiInputPolicy .* its policies: MlpPolicy") as refused:
        dry_run.preflight(compose_config("env=pointgoal", "algo=crossq", "~tuned"))
    assert "wrappers=[flatten]" in str(refused.value.fix)
    assert dry_run.preflight(compose_config("env=pointgoal", "algo=crossq", "~tuned", "wrappers=[flatten]"))
