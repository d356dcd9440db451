"""README.md is the front door: at most 150 lines, and every command of its tour is run here, in a folder of its own,
with its documented output compared with the real one (numbers, run stamps and absolute paths aside; ``...`` stands
for lines the README leaves out).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console_output import console_blocks, matches, shape

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_is_short_and_its_tour_is_there() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    commands = [command for block in console_blocks(text) for command, _ in block]
    assert len(commands) == 8 and commands[0] == "python -m rlrun"
    assert 'pip install torch==2.13.0 -e ".[test]"' in text and "\npytest\n" in text  # the two set-up commands
    assert "pip install torch==2.13.0 -e . && python -m rlrun" in text  # and rlrun alone, without the test stack


def test_ci_runs_the_readmes_use_line_on_a_fresh_virtualenv() -> None:
    """CI (.ci/run) runs the README's line that installs rlrun without the test stack, as written, in a virtualenv
    of its own, and it trains; the test line is CI's own set-up (with more extras) and its ``pytest``."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "grep -m1 -F 'pip install torch==2.13.0 -e . &&' README.md" in ci and "${use_line//.venv/" in ci
    [use_line] = [line for line in README.read_text().splitlines() if "pip install torch==2.13.0 -e . &&" in line]
    assert use_line.startswith("python3 -m venv .venv && . .venv/bin/activate && ")


def test_every_command_of_the_readme_prints_what_the_readme_shows(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this install's console scripts
    for block in console_blocks(README.read_text()):
        for command, documented in block:
            runs = sorted((tmp_path / "outputs" / "runs" / "cartpole-ppo").glob("*"))
            argv = command.replace(
                "outputs/runs/cartpole-ppo/<stamp>", str(runs[-1].relative_to(tmp_path)) if runs else "<stamp>"
            )
            argv = re.sub(r"^python ", f"{sys.executable} ", argv)
            done = subprocess.run(argv, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            real = (done.stdout + done.stderr).splitlines()
            expected = 2 if "learning_rat=" in command else 0
            assert done.returncode == expected, f"{command}\n{done.stderr[-3000:]}"
            assert matches(documented, real), (
                f"{command}\ndocumented:\n" + "\n".join(documented) + "\nreal:\n" + ("\n".join(real))
            )


@pytest.mark.parametrize("line", ["$ rlrun x", "plain"])
def test_shapes_ignore_what_changes_between_runs(line: str) -> None:
    assert shape("run folder: outputs/runs/a/2026-11-26_11-32-28-zxwz, 1,551 steps/s") == shape(
        "run folder: outputs/runs/a/2027-01-01_00-00-00-abcd, 9 steps/s"
    )
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and not matches(["a", "d"], ["a", "b", "d"])
    assert shape(line) == line


def test_the_documented_rlrun_check_output_is_the_tools(tmp_path: Path) -> None:
    """docs/errors.md's rlrun-check example, run: every line as the tool prints it (DISPLAY unset, as on CI)."""
    blocks = console_blocks((ROOT / "docs" / "errors.md").read_text())
    [(command, documented)] = [c for block in blocks for c in block if c[0].startswith("rlrun-check env=pointgoal")]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "COLUMNS")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr  # two checks fail, as documented
    real = (done.stdout + done.stderr).splitlines()
    assert matches(documented, real), "documented:\n" + "\n".join(documented) + "\nreal:\n" + "\n".join(real)
    assert sum("fix: compute step's reward with compute_reward" in line for line in real) == 2  # SB3's too


def smoke_commands(text: str) -> dict[str, str]:
    """The smoke-test table of a page: each env family's command."""
    rows = re.findall(r"^\| ([^|`]+?) \|(?:[^|]*\|)? `(rlrun [^`]+)` \|$", text, re.M)
    return {family.strip(): command for family, command in rows}


SMOKE = smoke_commands(README.read_text())


def test_the_readme_and_the_envs_page_give_the_same_smoke_test_per_family() -> None:
    envs_page = smoke_commands((ROOT / "docs" / "envs.md").read_text())
    assert len(SMOKE) == 7 and list(SMOKE.values()) == list(envs_page.values())


@pytest.mark.parametrize("command", SMOKE.values(), ids=SMOKE.keys())
def test_each_smoke_test_is_accepted_as_written(tmp_path: Path, command: str) -> None:
    """The command composes and passes rlrun's checks of the command line (``--cfg job`` stops there)."""
    done = subprocess.run(
        [sys.executable, "-m", "rlrun", *command.split()[1:], "--cfg", "job"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "total_timesteps:" in done.stdout, done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", SMOKE.values(), ids=SMOKE.keys())
def test_each_smoke_test_trains_and_reports(tmp_path: Path, command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rlrun", *command.split()[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "final evaluation: mean return" in done.stdout + done.stderr
