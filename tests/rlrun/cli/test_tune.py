"""``rlrun-tune``'s checks of its own keys (rlrun/cli/tune.py); studies themselves are tested in tune/test_tune.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rlrun.config.errors import UserError
from rlrun.config.schema import TuneConfig
from rlrun.tune.command import check_tune_keys
from tests import forked_commands
from tests.rlrun.helpers import assert_name_refused_before_anything


@pytest.mark.parametrize("name", ["中文", "ünïcødé-日本", "my study", "pointenv-sac"])
def test_a_study_name_is_accepted_as_given(name: str) -> None:
    check_tune_keys(OmegaConf.structured(TuneConfig(study=name)))


@pytest.mark.parametrize(("name", "reason"), [("..", "not a folder of its own"), (".x", "starts with a dot")])
def test_a_study_name_that_is_no_folder_of_its_own_is_refused(name: str, reason: str) -> None:
    with pytest.raises(UserError, match=f"tune.study='{name}' cannot name a folder: .*{reason}"):
        check_tune_keys(OmegaConf.structured(TuneConfig(study=name)))


@pytest.mark.parametrize("name", ["..", "a/b"])
def test_a_refused_study_name_writes_nothing(tmp_path: Path, name: str) -> None:
    assert_name_refused_before_anything(tmp_path, "rlrun.cli.tune", "env=gridworld", "algo=ppo", f"tune.study={name}")


@pytest.mark.parametrize(
    ("overrides", "study"),
    [(["env=gym", "env.id=Acrobot-v1"], "acrobot-v1-ppo"), (["env=cartpole"], "cartpole-ppo")],
    ids=["gym-named-after-the-id", "named-config"],
)
def test_the_default_study_name_is_env_algo_with_the_env_named_as_runs_are(overrides: list[str], study: str) -> None:
    from hydra import compose, initialize_config_module
    from hydra.core.hydra_config import HydraConfig

    from rlrun.tune.command import make_setup

    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("tune", overrides=[*overrides, "algo=ppo"], return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    assert make_setup(cfg).name == study


def test_a_misspelt_key_gets_rlruns_answer_as_rlrun_gives_it(tmp_path: Path) -> None:
    """rlrun-tune enters Hydra as rlrun does: Hydra's raw message, exit 1 and ``+total_timestep=5`` before."""

    args = ["-m", "rlrun.cli.tune", "env=gridworld", "algo=ppo", "total_timestep=5"]
    result = forked_commands.run(args, cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("rlrun-tune: error: total_timestep is not a key of rlrun's config")
    assert "fix: total_timesteps=5" in result.stderr and list(tmp_path.iterdir()) == []
