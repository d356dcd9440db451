"""Following a run in any log: the lines a run prints without a terminal, and what a sweep's process prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from stable_baselines3 import PPO

from rlrun.run.progress import Progress, duration
from tests import forked_commands

CLOCK = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "  # the time before a progress line in a log
TINY = [
    "env=gridworld",
    "algo=ppo",
    "total_timesteps=1024",
    "eval.every=256",
    "eval.episodes=2",
    "eval.final_episodes=4",
    "eval.n_envs=2",
    "snapshot.every=100000",
    "algo.n_steps=64",
    "algo.batch_size=64",
    "algo.policy_kwargs={net_arch:[16]}",
]


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m rlrun`` with its output to pipes, as in a cluster job's log or under ``nohup``."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    return forked_commands.run(["-m", "rlrun", *args], cwd=cwd, env=env, timeout=300)


def test_a_run_without_a_terminal_prints_each_evaluation_and_the_final_one(tmp_path: Path) -> None:
    result = rlrun([*TINY, "progress_bar=auto", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    evaluations = re.findall(
        r"^evaluation at step ([\d,]+): mean return .* over 2 episodes.*steps/s", result.stdout, re.M
    )
    assert evaluations == ["256", "512", "768", "1,024"]
    assert re.search(r"^final evaluation: 4 episodes on 2 env copies \.\.\.$", result.stdout, re.M)
    assert re.search(r"^final evaluation: mean return .* over 4 episodes, success rate", result.stdout, re.M)
    log = (tmp_path / "run" / "rlrun.log").read_text()
    assert log.count("evaluation at step") == 4 and log.count("final evaluation:") == 2
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert 0 < record["eval_s"] < record["wall_s"]


def test_progress_lines_every_progress_every_seconds(tmp_path: Path) -> None:
    result = rlrun(
        [*TINY, "total_timesteps=3072", "progress_every=0.01", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path
    )
    assert result.returncode == 0, result.stderr
    line = r"step ([\d,]+)/3,072 \(\d+%\), .*steps/s, about .* left$"
    lines = re.findall(CLOCK + line, result.stdout, re.M)  # the time before each, as the output is no terminal
    assert len(lines) >= 2, result.stdout
    assert len(lines) == len(re.findall(line, (tmp_path / "run" / "rlrun.log").read_text(), re.M))


def test_no_progress_lines_with_progress_every_0_and_one_episode_in_words(tmp_path: Path) -> None:
    one = ["eval.final_episodes=1", "eval.n_envs=1"]
    result = rlrun([*TINY, *one, "progress_every=0", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert not re.search(r"^step [\d,]+/", result.stdout, re.M)
    assert re.search(r"^gridworld \+ ppo, seed 0: mean return .* over 1 episode, success rate", result.stdout, re.M)
    assert "episodes" not in result.stdout.split("final evaluation: 1 episode ...")[1]


def test_a_sweep_prints_its_progress_and_each_job_logs_its_own_lines(tmp_path: Path) -> None:
    args = ["-m", *TINY, "seed=0,1", "hydra/launcher=joblib", "sweep=s", "progress_every=0.5"]
    result = rlrun(args, tmp_path)
    assert result.returncode == 0, result.stderr
    progress = r"sweep progress: \d+ done, \d+ running, \d+ left \(\d+% of the steps\)"
    assert re.search(CLOCK + progress, result.stdout, re.M)  # the time before it, as the output is no terminal
    assert "evaluation at step" not in result.stdout  # a job's lines go to its own log
    sweep_log = (tmp_path / "outputs" / "sweeps" / "s" / "rlrun.log").read_text()
    for noise in ("Joblib.Parallel(", "Launching jobs", "#1 : env=gridworld"):  # the launcher's: in the sweep's log
        assert noise not in result.stdout + result.stderr
        assert noise in sweep_log
    for channel in ("hydra.job.env_set", "RLRUN_SWEEP_ACTION"):  # no back channel to the jobs any more
        assert channel not in result.stdout + result.stderr + sweep_log
    logs = sorted((tmp_path / "outputs" / "sweeps" / "s").glob("gridworld-ppo/*/seed-*/rlrun.log"))
    assert len(logs) == 2
    assert all(log.read_text().count("evaluation at step") == 4 for log in logs)


def test_durations_read_as_words() -> None:
    assert [duration(s) for s in (0.04, 45, 185, 7620)] == ["0.0 s", "45 s", "3 min 05 s", "2 h 07 min"]


def test_the_progress_bar_ends_at_the_budget_not_past_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # rlrun draws the bar in a terminal only
    shown = Progress(100, every_s=0, bar=True)
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, n_epochs=1, policy_kwargs={"net_arch": [8]})
    model.learn(100, callback=shown)  # one rollout of 64 steps too many: 128 steps taken
    assert model.num_timesteps == 128
    shown.close()  # as the run does once its final evaluation is done: the bar's last frame
    out = capsys.readouterr().out
    assert "100/100" in out and "128/100" not in out
