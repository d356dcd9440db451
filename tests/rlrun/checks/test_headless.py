"""``rlrun-check`` on a server (issue 21, point 3): MuJoCo and Fetch envs checked without a display, and the env
checked as it trains (after its wrappers), the raw env's own problems reported for information."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rlrun.checks import env_checks
from rlrun.checks.printing import report
from rlrun.run import check_suite
from rlrun.startup import headless
from tests import forked_commands
from tests.rlrun.helpers import compose_check

ROOT = Path(__file__).resolve().parents[3]
TINY = "tests.rlrun.checks.tiny_envs"
NO_DISPLAY = ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL")  # a server: no display, no GL backend chosen


def rlrun_check(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``rlrun-check`` as a user on a server runs it (MUJOCO_GL unset: the test process's own was set by rlrun)."""
    env = {key: value for key, value in os.environ.items() if key not in NO_DISPLAY}
    env |= {"HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(ROOT)}
    # afresh: MuJoCo's renderer aborts in a process forked from one that imported torch (libc++abi)
    return forked_commands.run(["-m", "rlrun.cli.check", *args], cwd=cwd, env=env, timeout=300, fresh=True)


@pytest.mark.parametrize(
    ("env", "rendered"),
    [
        (["env=gym", "env.id=InvertedPendulum-v5"], "rendered rgb_array, depth_array, rgbd_tuple"),
        (["env=gym", "env.id=FetchReach-v4"], "rendered rgb_array"),
    ],
    ids=["mujoco", "fetch"],
)
def test_mujoco_and_fetch_envs_are_checked_without_a_display(env: list[str], rendered: str, tmp_path: Path) -> None:
    # Before: Gymnasium's checker rendered `human` and GLFW aborted the process (exit 134, no report).
    result = rlrun_check([*env, "steps=60"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())  # the report's lines are wrapped
    assert f"Gymnasium check_env: {rendered}; human not rendered: no display here" in text
    assert re.search(r"\n\d+ passed, 0 failed, .*for information$", result.stdout.rstrip())
    assert "INFO resume mode: restart_episodes: the unpickled env" in text  # EzPickle: a new env, not the episode
    assert "OpenGL_accelerate" not in result.stdout + result.stderr  # PyOpenGL's note is not logged
    assert list(tmp_path.iterdir()) == []


def test_atari_is_checked_headless_and_its_wrappers_by_design_are_information(tmp_path: Path) -> None:
    # SB3's AtariWrapper continues the game at a reset after a lost life: Gymnasium's seeded-reset check fails on it.
    result = rlrun_check(["env=pong", "env.n_envs=1", "steps=20"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "Gymnasium check_env: rendered rgb_array; human not rendered: no display here" in text
    assert "INFO Gymnasium check_env:" in text and "reset(seed=123)` is non-deterministic" in text
    assert "the raw env passes: the family's wrappers (env.wrappers.atari) cause it" in text


def test_minigrid_is_checked_after_its_observation_wrapper(tmp_path: Path) -> None:
    # Before: the checkers saw the raw Dict (its text mission) and failed, exit 1, though the wrapped env trains.
    result = rlrun_check(["env=gym", "env.id=MiniGrid-Empty-5x5-v0", "wrappers=[minigrid_flat]", "steps=60"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS  Gymnasium check_env" in result.stdout and "PASS  SB3 check_env" in result.stdout
    info = result.stdout.split("INFO  the raw env, before the wrappers")[1]
    assert "Error while checking key=mission" in info  # the raw env's problem, for information only
    assert result.stdout.rstrip().endswith("0 failed, 2 skipped, 1 for information")


def test_render_modes_leave_out_human_without_a_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    detail, notes = env_checks.render_modes(compose_check("env=cartpole"), ["human", "rgb_array"])
    assert detail == "rendered rgb_array; human not rendered: no display here (DISPLAY and WAYLAND_DISPLAY are unset)"
    assert notes == []
    monkeypatch.setenv("DISPLAY", ":0")  # pygame draws into SDL's dummy driver: no window either way
    assert env_checks.render_modes(compose_check("env=cartpole"), ["human", "rgb_array"])[0] == (
        "rendered human, rgb_array"
    )


def test_a_mode_that_fails_to_render_is_information() -> None:
    results = check_suite.run_checks(compose_check("env=gym", f"env.id={TINY}:obs/NoFrames-v0", "steps=50"), False)
    gym_check = results[0]
    assert gym_check.status == env_checks.PASS, report(results)
    assert any("render_mode=rgb_array failed (RuntimeError: no frames here" in note for note in gym_check.notes)


def test_prefer_egl_sets_mujoco_gl_only_without_a_display_or_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NO_DISPLAY:
        monkeypatch.delenv(name, raising=False)
    headless.prefer_egl()
    assert os.environ["MUJOCO_GL"] == "egl"  # this machine has Mesa's libEGL
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    headless.prefer_egl()
    assert os.environ["MUJOCO_GL"] == "osmesa"  # the user's choice stays
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.setenv("DISPLAY", ":1")
    headless.prefer_egl()
    assert "MUJOCO_GL" not in os.environ  # a display: GLFW, MuJoCo's default
