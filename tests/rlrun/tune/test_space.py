"""Search spaces (rlrun/tune/space.py): the shipped ones pass their own checks; each bad entry is named with its fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from rlrun.config.errors import UserError
from rlrun.tune import space
from tests.rlrun.helpers import compose_config
from tests.rlrun.sweep_helpers import BAD_SPACE_ENTRIES

ROOT = Path(__file__).resolve().parents[3]


SHIPPED = {
    "ppo": "gridworld",
    "a2c": "gridworld",
    "dqn": "gridworld",
    "sac": "pointenv",
    "td3": "pointenv",
    "her": "pointgoal",
}


@pytest.mark.parametrize("algo, env", SHIPPED.items())
def test_every_shipped_search_space_passes_its_own_checks(algo: str, env: str) -> None:
    text = (ROOT / "conf" / "search_space" / f"{algo}.yaml").read_text()
    assert text.startswith(f"# Search space for {algo.upper()}")
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("tune", overrides=[f"env={env}", f"algo={algo}"])
    params = space.parse_space(OmegaConf.to_container(cfg.search_space), f"search_space={algo}")
    space.check_against(params, cfg)
    assert all(param.key.startswith("algo.") for param in params)


@pytest.mark.parametrize("entries, message", BAD_SPACE_ENTRIES.values(), ids=BAD_SPACE_ENTRIES.keys())
def test_each_bad_search_space_entry_is_named_with_its_fix(entries: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as caught:
        params = space.parse_space(entries, "search_space=test")
        space.check_against(params, compose_config("env=gridworld", "algo=ppo"))
    assert message in str(caught.value) and "fix:" in str(caught.value)
    assert next(iter(entries)) in str(caught.value)
