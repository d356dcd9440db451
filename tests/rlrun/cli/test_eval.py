"""Evaluate, render, record and load any saved run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest
from omegaconf import OmegaConf
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecNormalize

import rlrun
from rlrun.cli.eval import main
from rlrun.run import snapshots
from rlrun.run.evaluation import evaluate
from rlrun.run.loading import eval_copies
from rlrun.run.train import train
from tests.rlrun.helpers import compose_config, shrink


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("run")
    cfg = shrink(compose_config("env=gridworld", "algo=ppo"), 1024)
    cfg.snapshot.every = 256
    train(cfg, run_dir)
    return run_dir


def test_evaluate_prints_returns_and_success(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(finished_run), "--episodes", "3"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "over 3 episodes" in out and "success rate" in out


@pytest.mark.parametrize("snapshot", ["final", "latest", "best", "512"])
def test_any_snapshot_can_be_evaluated(finished_run: Path, snapshot: str) -> None:
    model, env = rlrun.load_run(finished_run, snapshot=snapshot)
    expected = 1024 if snapshot == "final" else None
    if snapshot == "512":
        expected = 512
    if expected is not None:
        assert model.num_timesteps == expected
    assert env.num_envs == 1


def test_evaluation_runs_on_the_runs_eval_copies(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_copies(finished_run) == compose_config().eval.n_envs > 1
    model, env = rlrun.load_run(finished_run, n_envs=3)
    assert env.num_envs == 3
    expected = evaluate(model, env, 4)
    with pytest.raises(SystemExit):
        main([str(finished_run), "--episodes", "4", "--n-envs", "3"])
    summary = f"mean return {expected.mean_return:.3f} ± {expected.std_return:.3f} over 4 episodes"
    assert summary in capsys.readouterr().out


def test_runs_from_before_eval_n_envs_evaluate_on_one_copy(finished_run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    cfg = OmegaConf.load(finished_run / "config.yaml")
    del cfg.eval.n_envs
    OmegaConf.save(cfg, old / "config.yaml")
    assert eval_copies(old) == 1


def test_render_ansi_prints_frames(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([str(finished_run), "--episodes", "1", "--render", "ansi"])
    assert "A" in capsys.readouterr().out  # the agent's cell in the text grid


def test_record_gif(finished_run: Path, tmp_path: Path) -> None:
    video = tmp_path / "episode.gif"
    result = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.eval", str(finished_run), "--episodes", "2", "--video", str(video)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    frames = imageio.mimread(video)
    assert len(frames) >= 2 and frames[0].ndim == 3 and frames[0].shape[2] in (3, 4)
    assert np.asarray(frames[0]).std() > 0  # a picture, not a blank


def test_load_run_gives_a_plain_sb3_model_and_a_ready_env(finished_run: Path) -> None:
    model, env = rlrun.load_run(finished_run)
    assert isinstance(model, PPO)
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(action[0])


def test_load_run_applies_normalisation(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=pendulum", "algo=ppo", "env.normalize.obs=true"), 256)
    train(cfg, tmp_path)
    _, env = rlrun.load_run(tmp_path)
    assert isinstance(env, VecNormalize) and not env.training and env.obs_rms.count > 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{empty}"], "no config.yaml"),
        (["{no_model}"], "has no model to evaluate"),
        (["{run}", "--snapshot", "999"], "no complete snapshot at step 999"),
        (["{run}", "--snapshot", "newest"], "is not one of final, latest, best"),
        (["{run}", "--video", "out.avi"], "must end in .gif or .mp4"),
        (["{run}", "--episodes", "0"], "--episodes 0 must be at least 1"),
        (["{run}", "--n-envs", "0"], "--n-envs 0 must be at least 1"),
        (["{run}", "--render", "ansi", "--n-envs", "3"], "frames come from one copy"),
    ],
)
def test_mistakes_are_clear(finished_run: Path, tmp_path: Path, args: list[str], message: str) -> None:
    no_model = tmp_path / "no_model"
    no_model.mkdir()
    (no_model / "config.yaml").write_text((finished_run / "config.yaml").read_text())
    folders = {"empty": tmp_path, "no_model": no_model, "run": finished_run}
    result = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.eval", *(a.format(**folders) for a in args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.avi").exists()


def test_best_is_the_snapshot_with_the_highest_score(finished_run: Path) -> None:
    folder = finished_run / "snapshots"
    scores = {s: snapshots.manifest(s)["score"] for s in snapshots.list_snapshots(folder)}
    scored = {s: score for s, score in scores.items() if score is not None}  # None: taken before any evaluation
    assert scored and snapshots.best(folder) == max(scored, key=lambda s: scored[s])
