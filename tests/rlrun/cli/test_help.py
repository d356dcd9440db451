"""Help that helps: ``rlrun --help`` names every console command and fits a screen; each command's ``--help``
starts with what it does and lists its own keys."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from rlrun.config.usage import COMMANDS

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


def help_of(command: str) -> str:
    script = Path(sys.executable).parent / command
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_rlrun_help_names_every_command_and_fits_a_screen() -> None:
    text = help_of("rlrun")
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 50 and max(map(len, lines)) <= 120, text
    for command in SCRIPTS:
        assert any(line.split()[:1] == [command] for line in lines), f"{command} is not listed:\n{text}"
    assert "presets" in text and "rlrun-envs --presets" in text  # counted, with the command that lists them
    assert "acrobot_a2c" not in text  # not the whole list


def test_every_console_command_has_its_line() -> None:
    assert sorted(name for name, _ in COMMANDS) == sorted(SCRIPTS)


@pytest.mark.parametrize(
    ("command", "starts", "keys"),
    [
        ("rlrun-check", "rlrun-check builds what `rlrun` would train", ["steps=", "sim=", "render="]),
        ("rlrun-tune", "rlrun-tune runs an Optuna study", ["tune.trials=", "tune.seeds=", "tune.n_jobs="]),
        ("rlrun-eval", "usage: rlrun-eval", ["--video", "human", "FILE.mp4 (streamed"]),
        ("rlrun-table", "usage: rlrun-table", ["--out", "--by", "--compare"]),
    ],
)
def test_each_command_says_what_it_does_and_lists_its_keys(command: str, starts: str, keys: list[str]) -> None:
    text = help_of(command)
    assert text.startswith(starts) and "powered by Hydra" not in text and "%%" not in text
    assert all(key in text for key in keys)


def test_rlrun_envs_lists_the_presets() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.envs", "--presets"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[1:]
    assert len(rows) == len(list((REPO / "conf" / "tuned").glob("*.yaml")))
    assert any(row.split()[:3] == ["env=cartpole", "algo=ppo", "tuned"] for row in rows)
    assert any(row.split()[:2] == ["env=fetchreach", "algo=her_tqc"] for row in rows)
