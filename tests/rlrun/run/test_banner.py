"""The start banner: the preset, where its values come from, its budget and file, then the caller's lines."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rlrun.run import banner
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


@pytest.mark.parametrize(
    ("count", "text"),
    [(1_000_000, "1M"), (2_500_000, "2.5M"), (20_000, "20k"), (3_000, "3k"), (1_500, "1.5k"), (1_234, "1234")],
)
def test_steps_are_written_as_the_preset_headers_write_them(count: int, text: str) -> None:
    assert banner.steps(count) == text


def test_a_zoo_preset_says_whose_values_its_budget_and_its_file() -> None:
    cfg = compose_config("env=halfcheetah", "algo=sac")
    meta = {"preset": "halfcheetah_sac", "algo": "sac", "overrides": ["env=halfcheetah", "algo=sac"]}
    lines = banner.start_lines(cfg, meta, extra=["resume mode: new"])
    assert lines[0] == "preset halfcheetah_sac: RL Zoo's values, not re-verified, 1M steps"
    assert Path(lines[1].split("from ", 1)[1]) == Path("conf/tuned/halfcheetah_sac.yaml").resolve()
    assert lines[2:] == ["resume mode: new"]


def test_a_budget_from_the_command_line_is_shown_with_the_presets() -> None:
    cfg = compose_config("env=cartpole", "algo=ppo", "total_timesteps=2000")
    meta = {"preset": "cartpole_ppo", "algo": "ppo", "overrides": ["total_timesteps=2000"]}
    first = banner.start_lines(cfg, meta)[0]
    assert first == (
        "preset cartpole_ppo: tuned here, verified on seeds 0-4 (pytest -m slow), 2k steps "
        "(total_timesteps from the command line; the preset's budget: 50k)"
    )


def test_without_a_preset_the_banner_says_so() -> None:
    cfg = compose_config("env=cartpole", "algo=ppo", "~tuned")
    assert banner.start_lines(cfg, {"preset": None, "algo": "ppo"}) == [
        "no preset: algo=ppo at its config's values (SB3's defaults), 100k steps"
    ]


def test_a_run_logs_the_banner_first(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = shrink(compose_config("env=gridworld", "algo=ppo"), 128)
    with caplog.at_level(logging.INFO, logger="rlrun"):
        train(cfg, tmp_path / "run", {"preset": "gridworld_ppo", "algo": "ppo", "overrides": ["total_timesteps=128"]})
    assert caplog.messages[0].startswith("preset gridworld_ppo: tuned here")
    assert caplog.messages[1].endswith("gridworld_ppo.yaml")
