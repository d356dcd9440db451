"""Runs of ``env=gym`` and the family configs are named after their env id (DESIGN.md, "Folders"): run folders,
sweep folders, ``run.json``'s ``env``, table groups and plot panels; older runs named ``gym`` still tabulate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from rlrun.table.write import write_tables
from tests import forked_commands
from tests.rlrun.table.helpers import read_json, read_rows

OLD = Path(__file__).resolve().parents[2] / "fixtures" / "aaa907b"
# Acrobot-v1 through env=gym, trained for seconds: episodes cut at 40 steps, two evaluations of two episodes.
ACROBOT = [
    "env=gym",
    "env.id=Acrobot-v1",
    "algo=ppo",
    "env.max_episode_steps=40",
    "total_timesteps=128",
    "algo.n_steps=64",
    "algo.batch_size=32",
    "algo.policy_kwargs={net_arch:[8]}",
    "eval.every=64",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "progress_bar=false",
]


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    done = forked_commands.run(["-m", "rlrun", *args], cwd=cwd, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_gym_runs_sweeps_and_tables_are_named_after_the_id(tmp_path: Path) -> None:
    rlrun(ACROBOT, tmp_path)
    (run_dir,) = (tmp_path / "outputs/runs").glob("*/*")
    assert run_dir.parent.name == "acrobot-v1-ppo"
    record = json.loads((run_dir / "run.json").read_text())
    assert record["env"] == "acrobot-v1" and record["env_id"] == "Acrobot-v1"

    rlrun(["-m", *ACROBOT, "seed=1,2", "sweep=s"], tmp_path)
    jobs = sorted(p.relative_to(tmp_path / "outputs/sweeps/s") for p in (tmp_path / "outputs/sweeps/s").glob("*/*/*"))
    assert [str(p) for p in jobs] == [
        "acrobot-v1-ppo/env.max_episode_steps-40_total_timesteps-128_algo.n_steps-64_algo.batch_size-32_algo.policy"
        "_kwargs-net_arch+8/seed-1",
        "acrobot-v1-ppo/env.max_episode_steps-40_total_timesteps-128_algo.n_steps-64_algo.batch_size-32_algo.policy"
        "_kwargs-net_arch+8/seed-2",
    ]
    sweep = json.loads((tmp_path / "outputs/sweeps/s/sweep.json").read_text())
    assert sweep["counts"]["completed"] == 2

    # a run recorded before runs were named after their id: run.json says "gym"
    older = tmp_path / "outputs/older/run"
    shutil.copytree(run_dir, older)
    record["env"], record["seed"] = "gym", 3
    (older / "run.json").write_text(json.dumps(record))
    manifest = json.loads((older / "run-manifest.json").read_text())
    manifest["run"]["id"] = "an-older-run"  # a run of its own, not a copy of the first (tables count copies once)
    (older / "run-manifest.json").write_text(json.dumps(manifest))
    write_tables([tmp_path / "outputs"], tmp_path / "table")
    assert list(read_rows(tmp_path / "table")) == ["acrobot-v1-ppo"]
    (group,) = read_json(tmp_path / "table")["groups"]
    assert sorted(run["seed"] for run in group["runs"]) == [0, 1, 2, 3]
    assert "`acrobot-v1-ppo`" in (tmp_path / "table/table.md").read_text()

    # rlrun-table from a folder of the user's finds Acrobot-v1's reward_threshold (-100; episodes of 40 steps reach it)
    done = forked_commands.run(["-m", "rlrun.cli.table", "outputs", "--out", "table2"], cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    row = read_rows(tmp_path / "table2")["acrobot-v1-ppo"]
    assert (row["steps_to_threshold"], row["reached"]) == ("64", "4")


def test_old_fixture_runs_still_load_and_tabulate_under_their_config_names(tmp_path: Path) -> None:
    write_tables([OLD], tmp_path / "table")
    assert list(read_rows(tmp_path / "table")) == [
        "gridworld-ppo env.normalize.obs=True env.normalize.reward=True total_timesteps=512",
        "gridworld-ppo env.normalize.obs=true env.normalize.reward=true total_timesteps=1024",
        "gridworld-ppo env.normalize.obs=true env.normalize.reward=true total_timesteps=2048",
    ]
