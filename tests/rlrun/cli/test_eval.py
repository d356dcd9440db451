"""``rlrun-eval`` (rlrun/cli/eval.py): evaluate, render and record any saved run; loading is in run/test_loading.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest

import rlrun
from rlrun.cli.eval import main
from rlrun.run.evaluation import evaluate
from rlrun.run.loading import eval_copies
from tests.rlrun.helpers import compose_config


def test_evaluate_prints_returns_and_success(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(finished_run), "--episodes", "3"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "over 3 episodes" in out and "success rate" in out


def test_evaluation_runs_on_the_runs_eval_copies(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_copies(finished_run) == compose_config().eval.n_envs > 1
    model, env = rlrun.load_run(finished_run, n_envs=3)
    assert env.num_envs == 3
    expected = evaluate(model, env, 4)
    with pytest.raises(SystemExit):
        main([str(finished_run), "--episodes", "4", "--n-envs", "3"])
    summary = f"mean return {expected.mean_return:.3f} ± {expected.std_return:.3f} over 4 episodes"
    assert summary in capsys.readouterr().out


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
