"""Errors that keep their cause, and ids found without their module prefix (issue 21, point 5): a failure inside an
env names the line it started at and a fix that fits (rlrun/make/gym_make.py, rlrun/config/errors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlrun.config.errors import UserError, innermost_outside
from rlrun.make import gym_make, vec_envs
from tests.rlrun.helpers import QUICK_BUDGET, compose_config, run_with_packages

ROOT = Path(__file__).resolve().parents[3]

HELPER = '''\
"""Loads the simulator's model: where the failures below start."""
def load_model(path):
    raise AssertionError(f"model {path} has no bodies")  # line 3
def first_frame():
    raise ValueError("the camera is not ready")  # line 5
'''
ENV = '''\
"""Envs of a package of the user's: one fails in its constructor, one in reset, both inside the helper module."""
import gymnasium as gym
import numpy as np
from gymnasium import spaces
from . import helper


class Fails(gym.Env):
    def __init__(self):
        helper.load_model("robot.xml")


class ResetFails(gym.Env):
    def __init__(self):
        self.observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        helper.first_frame()
'''


def make_package(where: Path, name: str, ids: dict[str, str]) -> Path:
    """A package ``name`` under ``where`` whose import registers ``ids`` (id -> class in its env module)."""
    package = where / name
    package.mkdir(parents=True)
    registrations = "".join(f"gym.register({i!r}, entry_point='{name}.env:{cls}')\n" for i, cls in ids.items())
    (package / "__init__.py").write_text(f"import gymnasium as gym\n{registrations}")
    (package / "helper.py").write_text(HELPER)
    (package / "env.py").write_text(ENV)
    return package


def test_a_constructor_failure_names_the_line_in_the_users_code(tmp_path: Path) -> None:
    # Before: `failed while being made: AssertionError: ...` with `fix: fix the env's constructor`, no place.
    package = make_package(tmp_path / "src", "myrobot", {"myrobot/Fails-v0": "Fails"})
    result = run_with_packages(
        "rlrun", ["env=gym", "env.id=myrobot:myrobot/Fails-v0", *QUICK_BUDGET], tmp_path, tmp_path / "src"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    line = f"{package / 'helper.py'}:3"
    assert f"AssertionError: model robot.xml has no bodies (raised at {line})" in result.stderr
    assert f"fix: fix the env's code at {line}" in result.stderr and "Traceback" not in result.stderr


def test_a_failure_inside_an_installed_library_points_at_the_extras_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A library of the Fetch family failing inside (gymnasium-robotics' assertion under an unsupported mujoco).
    site = tmp_path / "site-packages"
    package = make_package(site, "fakerobotics", {"FetchBroken-v0": "Fails"})
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(UserError) as caught:
        vec_envs.make_env(compose_config("env=gym", "env.id=fakerobotics:FetchBroken-v0"))
    assert f"(raised at {package / 'helper.py'}:3)" in caught.value.problem
    assert caught.value.fix is not None
    assert caught.value.fix.startswith(
        "a library the env needs (fakerobotics) fails: check the versions the extra pins"
    )
    assert gym_make.families.install_command("robotics") in caught.value.fix
    assert isinstance(caught.value.__cause__, AssertionError)  # what HYDRA_FULL_ERROR=1 shows with its traceback


def test_a_reset_failure_in_rlrun_check_names_its_line(tmp_path: Path) -> None:
    package = make_package(tmp_path / "src", "mycam", {"mycam/ResetFails-v0": "ResetFails"})
    args = ["env=gym", "env.id=mycam:mycam/ResetFails-v0", "steps=20"]
    result = run_with_packages("rlrun.cli.check", args, tmp_path, tmp_path / "src")
    assert result.returncode == 1, result.stdout + result.stderr
    text = " ".join(result.stdout.split())  # the report's lines are wrapped
    line = f"{package / 'helper.py'}:5"
    assert f"FAIL seeded determinism: ValueError: the camera is not ready (raised at {line})" in text
    assert f"fix: fix the env's code at {line}" in text


def test_innermost_outside_skips_rlrun_frames() -> None:
    def fail() -> None:
        vec_envs.eval_seed("not a seed")  # type: ignore[arg-type]  # raises inside numpy, called from rlrun

    try:
        fail()
    except Exception as error:
        where = innermost_outside(error.__traceback__)
    assert where is not None and "numpy" in where and "/rlrun/" not in where


def test_an_id_of_an_installed_family_is_found_without_its_prefix(tmp_path: Path) -> None:
    # A fresh process: nothing imported gymnasium_robotics before rlrun looked for the id.
    args = ["env=gym", "env.id=FetchReach-v4", "algo=her", "algo.learning_starts=51", "algo.buffer_size=1000"]
    args += ["algo.batch_size=16", "+algo.policy_kwargs.net_arch=[8]", *QUICK_BUDGET]
    result = run_with_packages("rlrun", args, tmp_path, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fetchreach-v4 + her, seed 0" in result.stdout + result.stderr
    assert "Adroit" not in result.stdout + result.stderr  # gymnasium_robotics' notice at import is silenced


def test_subprocess_workers_find_the_id_too() -> None:
    cfg = compose_config("env=gym", "env.id=MiniGrid-Empty-5x5-v0", "wrappers=[minigrid_image]")
    venv = vec_envs.make_vec(cfg, 1, seed=0, vec_env="subproc")  # a fresh worker process makes its copy
    try:
        assert venv.reset().shape == (1, 7, 7, 3)
    finally:
        venv.close()


@pytest.mark.parametrize(
    ("env_id", "fix"),
    [
        ("FetchReachh-v4", "gymnasium_robotics is installed but registers no such id"),
        ("MiniGrid-Nowhere-v0", "minigrid is installed but registers no such id"),
        ("NoSuchEnv-v0", "`rlrun-envs --all PATTERN`"),
    ],
)
def test_an_id_still_not_found_names_what_would_register_it(env_id: str, fix: str) -> None:
    with pytest.raises(UserError) as caught:
        vec_envs.make_env(compose_config("env=gym", f"env.id={env_id}"))
    assert f"cannot make env.id={env_id!r}" in caught.value.problem and fix in str(caught.value.fix)


def test_a_family_that_is_not_installed_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gym_make.families, "missing_modules", list)  # as if no extra were installed
    command = gym_make.families.install_command("atari")
    assert gym_make.unknown_id_fix("ALE/Pong-v5") == f"ale_py registers it: install it with {command}"


def test_a_step_failure_while_training_names_its_line(tmp_path: Path) -> None:
    # Before: Hydra's shortened traceback, ending in the env's exception.
    args = ["env=gym", "env.id=tests.rlrun.checks.tiny_envs:obs/StepFails-v0", "algo=ppo", "algo.n_steps=32"]
    result = run_with_packages("rlrun", [*args, "algo.batch_size=32", *QUICK_BUDGET], tmp_path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    source = ROOT / "tests" / "rlrun" / "checks" / "tiny_envs.py"
    number = next(i for i, text in enumerate(source.read_text().splitlines(), 1) if "raise FloatingPointError" in text)
    line = f"{source}:{number}"
    assert f"rlrun: run failed: FloatingPointError: the simulation diverged at step 20 (raised at {line})" in (
        result.stderr
    )
    assert f"fix: fix the env's code at {line}" in result.stderr and "Traceback" not in result.stderr
    [run_json] = (tmp_path / "outputs").rglob("run.json")
    assert '"status": "failed"' in run_json.read_text()


def test_innermost_outside_prefers_the_callers_line_to_the_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reader.py").write_text("import json\ndef read():\n    return json.loads('{bad')  # line 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from reader import read  # type: ignore[import-not-found]

    try:
        read()
    except ValueError as error:
        where = innermost_outside(error.__traceback__)
    assert where == f"{tmp_path / 'reader.py'}:3"  # not json/decoder.py, where it was raised


def test_a_bad_id_in_subprocess_workers_is_the_user_error(tmp_path: Path) -> None:
    # Before: the workers' broken pipe (`ConnectionResetError`) was what the run reported.
    args = ["env=gym", "env.id=NoSuch-v0", "env.vec_env=subproc", "env.n_envs=1", *QUICK_BUDGET]
    result = run_with_packages("rlrun", args, tmp_path, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.rstrip().endswith("list the registered ids with `rlrun-envs --all PATTERN`")
    assert "rlrun: error: cannot make env.id='NoSuch-v0'" in result.stderr
