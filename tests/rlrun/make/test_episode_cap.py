"""Evaluation of an env that never ends an episode (rlrun/make/episode_cap.py): capped, and stoppable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from rlrun.make import episode_cap
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink
from tests.rlrun.third_party_envs import resets

ROOT = Path(__file__).resolve().parents[3]
ENDLESS = ["env=gym", "env.id=tests.rlrun.third_party_envs:Endless-v0", "algo=ppo", "~tuned"]


def test_a_run_on_an_endless_env_finishes_with_capped_evaluations(tmp_path: Path) -> None:
    cfg = shrink(compose_config(*ENDLESS, "eval.n_envs=2"), steps=64)
    final = train(cfg, tmp_path)
    assert final["capped"] == 2
    assert final["returns"] == [0.0, 0.0]
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "completed" and record["final"]["capped"] == 2


def test_a_capped_episode_is_truncated_and_marked() -> None:
    import gymnasium as gym

    import tests.rlrun.third_party_envs  # noqa: F401  (registers Endless-v0)

    env = episode_cap.capped_for_evaluation(gym.make("Endless-v0"))
    env.reset(seed=0)
    for _ in range(episode_cap.EVAL_MAX_EPISODE_STEPS - 1):
        *_, terminated, truncated, info = env.step(0)
        assert not (terminated or truncated)
    *_, terminated, truncated, info = env.step(0)
    assert truncated and not terminated and info[episode_cap.CAPPED]


def test_sigint_during_the_final_evaluation_stops_the_run(tmp_path: Path) -> None:
    """The final evaluation would take minutes (200 capped episodes of slow steps): a SIGINT ends it, the run is
    interrupted with a snapshot."""
    marker, run_dir = tmp_path / "resets", tmp_path / "run"
    args = ["-m", "rlrun", *ENDLESS, "total_timesteps=64", "algo.n_steps=32", "algo.batch_size=32"]
    args += ["eval.every=100000", "eval.final_episodes=200", "eval.n_envs=1", "snapshot.every=100000"]
    args += [f"+env.kwargs.resets={marker}", "+env.kwargs.step_seconds=0.002", "progress_bar=false"]
    args += [f"hydra.run.dir={run_dir}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with forked_commands.Popen(
        args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as p:
        while resets(marker) < 2 and p.poll() is None:  # the training copy's reset, then the evaluation copy's
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        _, stderr = p.communicate(timeout=120)  # the whole evaluation: 200 x 1000 steps of 2 ms
    assert p.returncode == 130, stderr
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "interrupted" and record["final"] is None


def test_a_periodic_evaluation_a_sigint_cut_short_is_done_when_the_run_resumes(tmp_path: Path) -> None:
    """SIGINT during the evaluation at step 64 ends it unreported; the resumed run evaluates at 64 first, so
    eval.csv has every step as a run never stopped would."""
    marker, run_dir = tmp_path / "resets", tmp_path / "run"
    args = ["-m", "rlrun", *ENDLESS, "total_timesteps=128", "algo.n_steps=32", "algo.batch_size=32"]
    args += ["eval.every=64", "eval.episodes=1", "eval.final_episodes=1", "eval.n_envs=1", "snapshot.every=100000"]
    args += [f"+env.kwargs.resets={marker}", "+env.kwargs.step_seconds=0.002", "progress_bar=false"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    with forked_commands.Popen([*args, f"hydra.run.dir={run_dir}"], cwd=tmp_path, env=env, **pipes) as p:
        # the reward check's copy, the training and evaluation copies' first resets, then the evaluation's at 64
        while resets(marker) < 4 and p.poll() is None:
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)  # the evaluation at 64 takes 2 s (1000 capped steps of 2 ms)
        _, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    assert (run_dir / "eval.csv").read_text().splitlines()[1:] == []
    assert json.loads((run_dir / "run.json").read_text())["timesteps"] == 64

    resumed = forked_commands.run(
        ["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], cwd=tmp_path, env=env, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    steps = [int(line.split(",")[0]) for line in (run_dir / "eval.csv").read_text().splitlines()[1:]]
    assert steps == [64, 128]
