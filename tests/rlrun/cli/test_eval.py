"""``rlrun-eval`` (rlrun/cli/eval.py): evaluate, render, record a saved run; loading is in playback/test_loading.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np
import pytest

import rlrun
from rlrun.cli.eval import main
from rlrun.playback.loading import eval_copies
from rlrun.run.evaluation import evaluate
from tests import forked_commands
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
    result = forked_commands.run(
        ["-m", "rlrun.cli.eval", str(finished_run), "--episodes", "2", "--video", str(video)], timeout=300
    )
    assert result.returncode == 0, result.stderr
    frames = imageio.mimread(video)
    assert len(frames) >= 2 and frames[0].ndim == 3 and frames[0].shape[2] in (3, 4)
    assert np.asarray(frames[0]).std() > 0  # a picture, not a blank


def test_video_records_one_episode_unless_episodes_says_more(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(finished_run), "--video", str(tmp_path / "one.gif")])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "over 1 episode," in out and "over 1 episodes" not in out
    assert f"recording to {tmp_path / 'one.gif'}" in out


def test_render_human_needs_a_display(finished_run: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = forked_commands.run(["-m", "rlrun.cli.eval", str(finished_run), "--render", "human"], timeout=300, env=env)
    assert result.returncode == 2 and "no display" in result.stderr and "--video episode.mp4" in result.stderr


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
    result = forked_commands.run(
        ["-m", "rlrun.cli.eval", *(a.format(**folders) for a in args)], timeout=300, cwd=tmp_path
    )
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.avi").exists()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda text: text.replace("algo:\n", "algo: 5\nold_algo:\n", 1),
            "config.yaml: 'algo' has a value of the wrong",
        ),
        (lambda text: text.replace("  n_envs:", "  n_envs: many\n  old:", 1), "config.yaml: 'env.n_envs' has a value"),
        (lambda text: text.replace("  id:", "  id: [a, b]\n  old_id:", 1), "config.yaml: 'env.id' has a value"),
        (lambda text: "- a list\n", "config.yaml holds a list, not a mapping"),
        (lambda text: text + "algo: {", "config.yaml cannot be read"),
    ],
    ids=["algo-a-number", "n-envs-text", "id-a-list", "a-list", "not-yaml"],
)
def test_a_config_yaml_of_the_wrong_shape_is_refused_naming_the_key(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, message: str
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    (run_dir / "config.yaml").write_text(edit((run_dir / "config.yaml").read_text()))
    with pytest.raises(SystemExit) as stop:
        main([str(run_dir), "--episodes", "1"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"{run_dir}: {message}" in err and "fix: restore the run's config.yaml" in err, err
