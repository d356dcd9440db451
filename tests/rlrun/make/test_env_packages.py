"""Ids of other packages (rlrun/make/gym_make.py): ``env.packages`` imports their modules in every command, known
installed packages are tried when an id is not found, and an id still not found names the closest ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlrun.checks import env_listing
from rlrun.config.errors import UserError
from rlrun.make import gym_make, vec_envs
from tests.rlrun.helpers import QUICK_BUDGET, compose_config, run_with_packages


def make_package(where: Path, name: str, env_id: str) -> None:
    """A package ``name`` whose import registers ``env_id`` (an 8-step env of tests/rlrun/third_party_envs.py)."""
    (where / name).mkdir(parents=True)
    entry = "tests.rlrun.third_party_envs:Shaped"
    (where / name / "__init__.py").write_text(
        f"import gymnasium as gym\ngym.register({env_id!r}, entry_point={entry!r}, max_episode_steps=100)\n"
    )


def test_an_id_of_a_module_in_env_packages_trains_and_evaluates_without_a_prefix(tmp_path: Path) -> None:
    make_package(tmp_path / "src", "roadsim", "road-fast-v0")
    args = ["env=gym", "env.id=road-fast-v0", "env.packages=[roadsim]", "algo=ppo", "algo.n_steps=32", *QUICK_BUDGET]
    result = run_with_packages(
        "rlrun", [*args, "algo.batch_size=32", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path, tmp_path / "src"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((tmp_path / "run" / "run.json").read_text())["env"] == "road-fast-v0"
    # rlrun-eval makes the env from the run's config.yaml, which names the packages to import
    evaluated = run_with_packages(
        "rlrun.cli.eval", [str(tmp_path / "run"), "--episodes", "2"], tmp_path, tmp_path / "src"
    )
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr


def test_a_module_in_env_packages_that_cannot_be_imported_is_named() -> None:
    with pytest.raises(UserError) as caught:
        vec_envs.make_env(compose_config("env=gym", "env.id=road-v0", "env.packages=[no_such_roads]"))
    assert "env.packages: 'no_such_roads' cannot be imported" in caught.value.problem


def test_an_installed_third_party_package_registers_an_id_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_package(tmp_path, "roadsim_known", "road-known-v0")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(gym_make, "THIRD_PARTY", ("roadsim_known",))  # as if it were one of the documented list
    env = vec_envs.make_env(compose_config("env=gym", "env.id=road-known-v0"))
    assert env.spec is not None and env.spec.id == "road-known-v0"


def test_an_id_still_not_found_names_the_closest_registered_ids() -> None:
    with pytest.raises(UserError) as caught:
        vec_envs.make_env(compose_config("env=gym", "env.id=CartPole-v2"))
    assert "did you mean CartPole-v1" in str(caught.value.fix) and "env.packages=[" in str(caught.value.fix)


def test_rlrun_envs_all_pattern_keeps_the_ids_holding_it() -> None:
    listed = [info.id for info in env_listing.list_envs(all_envs=True, pattern="cartpole")]
    others = [env_id for env_id in listed if not env_id.startswith("rlrun/")]
    assert others and all("cartpole" in env_id.lower() for env_id in others)
