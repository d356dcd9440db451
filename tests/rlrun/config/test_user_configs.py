"""The user's ``--config-dir`` configs win over rlrun's bundled ones (rlrun.config.user_configs): a preset named
like a bundled one is the one applied, the run's first lines say which file it came from, and a malformed one
is refused naming its file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rlrun.config.user_configs import user_configs_first

RUN = ["env=gridworld", "algo=ppo", "eval.episodes=1", "eval.final_episodes=1", "progress_bar=false"]
MINE = """\
# @package _global_
# my own preset for env=gridworld algo=ppo: a tiny budget
total_timesteps: 256
eval:
  every: 128
env:
  n_envs: 2
algo:
  n_steps: 16
  batch_size: 32
  policy_kwargs:
    net_arch: [16]
"""


def rlrun(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlrun", *args, "hydra.run.dir=run"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_user_preset_shadowing_a_bundled_one_is_applied_and_named(tmp_path: Path) -> None:
    (tmp_path / "myconf" / "tuned").mkdir(parents=True)
    mine = tmp_path / "myconf" / "tuned" / "gridworld_ppo.yaml"
    mine.write_text(MINE)

    result = rlrun(tmp_path, "--config-dir", "myconf", *RUN)

    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["total_timesteps"] == 256 and record["preset"] == "gridworld_ppo"  # the bundled one says 20000
    output = result.stdout + result.stderr
    banner = output.splitlines()[:2]  # the start banner: the preset, then the file it came from
    assert "preset gridworld_ppo:" in banner[0] and banner[1].endswith(f"from {mine}"), output


def test_a_malformed_user_config_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "myconf" / "tuned").mkdir(parents=True)
    broken = tmp_path / "myconf" / "tuned" / "gridworld_ppo.yaml"
    broken.write_text("# @package _global_\ntotal_timesteps: 600\nalgo:\n  n_steps: [16\n")

    result = rlrun(tmp_path, "--config-dir", "myconf", *RUN)

    assert result.returncode == 2, result.stderr
    # checked with the command line's other mistakes (rlrun.cli.mistakes), the file as --config-dir names it
    named = broken.relative_to(tmp_path).as_posix()
    assert f"{named}:5 is not valid YAML" in result.stderr and f"fix: fix the YAML at {named}:5" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run").exists()


def test_the_user_folder_becomes_hydras_primary_path_and_the_rest_keeps_its_order(tmp_path: Path) -> None:
    argv = ["-c", "job", "-cd", str(tmp_path), "env=gridworld", "--config-dir=x"]
    first = user_configs_first(argv[:5])
    assert first[0] == f"--config-path={tmp_path}" and first[1].startswith("--config-dir=")
    assert first[2:] == ["-c", "job", "env=gridworld"]
    assert user_configs_first(["env=gridworld"]) == ["env=gridworld"]
