"""rlrun as a user installs it: only ``rlrun`` and ``hydra_plugins`` in site-packages, and nothing that clashes
with a user's own code (an ``envs/`` folder of theirs, a checkout named ``rlrun`` in the working folder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rlrun.helpers import TINY_RUN

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A non-editable install of this checkout (a wheel built and unpacked into a folder of its own)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", target, REPO],
        check=True,
        capture_output=True,
    )
    return target


def run(args: list[str], cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``python args`` in ``cwd`` with the non-editable install first on the path (as site-packages would be)."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_wheel_installs_only_rlrun_and_hydra_plugins(installed: Path) -> None:
    packages = {p.name for p in installed.iterdir() if p.is_dir() and not p.name.endswith(".dist-info")} - {"bin"}
    assert packages == {"rlrun", "hydra_plugins"}
    assert (installed / "rlrun" / "envs" / "gridworld.py").is_file()
    assert (installed / "rlrun" / "conf" / "benchmark" / "zoo" / "cartpole_ppo.yaml").is_file()


def test_rlrun_works_in_a_folder_with_its_own_envs_package(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "__init__.py").write_text("MINE = True\n")  # a user's own envs package
    imported = run(
        ["-c", "import rlrun, rlrun.envs, envs; print(envs.MINE, rlrun.envs.ENV_IDS[0])"], tmp_path, installed
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split() == ["True", "rlrun/PointEnv-v0"]
    trained = run(["-m", "rlrun", *TINY_RUN], tmp_path, installed)
    assert trained.returncode == 0, trained.stderr
    assert "gridworld + ppo, seed 0: mean return" in trained.stderr + trained.stdout


def test_rlrun_works_from_the_parent_of_a_checkout_named_rlrun(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "rlrun").symlink_to(REPO, target_is_directory=True)  # the checkout, as `git clone ... rlrun` makes it
    imported = run(["-c", "import rlrun; print(rlrun.__version__, rlrun.__file__)"], tmp_path, installed)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split()[1].startswith(str(installed))
    trained = run(["-m", "rlrun", *TINY_RUN], tmp_path, installed)
    assert trained.returncode == 0, trained.stderr
    record = next((tmp_path / "outputs" / "runs").rglob("run.json"))
    assert json.loads(record.read_text())["status"] == "completed"


def test_importing_rlrun_and_its_envs_is_light(installed: Path, tmp_path: Path) -> None:
    code = "import sys, rlrun, rlrun.envs; print(sorted({'hydra', 'torch', 'stable_baselines3'} & set(sys.modules)))"
    result = run(["-c", code], tmp_path, installed)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_wheel_holds_every_config_and_env_file(installed: Path) -> None:
    """Every file under conf/ and envs/ (as git tracks them) ships in the wheel, the benchmark pairs included."""
    tracked = subprocess.run(
        ["git", "ls-files", "conf", "envs"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    shipped = {
        f"{'conf' if p.parts[0] == 'conf' else 'envs'}/{'/'.join(p.parts[1:])}"
        for p in (path.relative_to(installed / "rlrun") for path in (installed / "rlrun").rglob("*") if path.is_file())
        if p.parts[0] in ("conf", "envs") and "__pycache__" not in p.parts
    }
    expected = {name for name in tracked if name.endswith((".py", ".yaml"))}
    assert expected and expected <= shipped, sorted(expected - shipped)


def _modules(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.py")) if p.name != "__init__.py"]


def test_no_two_runner_modules_share_a_file_name_and_none_is_named_like_build_output() -> None:
    names = [p.name for p in _modules(REPO / "rlrun") + _modules(REPO / "hydra_plugins")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    folders = {p.name for p in (REPO / "rlrun").rglob("*") if p.is_dir()}
    assert not folders & {"build", "dist"}


def test_rlrun_modules_are_imported_under_their_own_names() -> None:
    """``from rlrun.x import y as z`` for a module y: the name a reader sees must be the file's."""
    import ast

    aliased = []
    for path in _modules(REPO / "rlrun") + _modules(REPO / "hydra_plugins") + [REPO / "rlrun" / "__init__.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlrun"):
                for alias in node.names:
                    module = f"{node.module}.{alias.name}"
                    is_module = (REPO / Path(*module.split(".")[1:])).with_suffix(".py").exists()
                    if alias.asname and alias.asname != alias.name and is_module:
                        aliased.append(f"{path.relative_to(REPO)}: {module} as {alias.asname}")
    assert aliased == []


def test_the_zoo_benchmark_composes_from_a_non_editable_install(installed: Path, tmp_path: Path) -> None:
    """``+benchmark=zoo`` needs every file of conf/benchmark/ (its pairs in zoo_pair/ too) inside the wheel."""
    shown = run(["-m", "rlrun", "+benchmark=zoo", "--cfg", "hydra"], tmp_path, installed)
    assert shown.returncode == 0, shown.stderr
    assert "+benchmark/zoo_pair:" in shown.stdout and not (tmp_path / "outputs").exists()
    job = run(
        ["-m", "rlrun", "+benchmark=zoo", "+benchmark/zoo_pair=pendulum_sac", "--cfg", "job"], tmp_path, installed
    )
    assert job.returncode == 0, job.stderr
    assert "Pendulum-v1" in job.stdout
    refused = run(["-m", "rlrun", "-m", "+benchmark=zoo", "--cfg", "job"], tmp_path, installed)  # Hydra's rule
    assert refused.returncode == 2 and "fix: drop -m" in refused.stderr and "Traceback" not in refused.stderr
