"""``rlrun-eval --render ansi``: each text frame under the episode and step that led to it, and the summary line
spelt as every other line rlrun prints (``, success rate``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlrun.cli.eval import main
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("run")
    train(shrink(compose_config("env=gridworld", "algo=ppo"), 64), run_dir)
    return run_dir


def test_ansi_frames_are_numbered_and_the_summary_reads_as_every_other_line(
    quick_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([str(quick_run), "--episodes", "2", "--render", "ansi", "--n-envs", "1"])
    out = capsys.readouterr().out.splitlines()
    headers = [line for line in out if re.fullmatch(r"episode \d+, step \d+:", line)]
    numbers = [tuple(map(int, re.findall(r"\d+", line))) for line in headers]
    assert numbers[:2] == [(1, 1), (1, 2)] and (2, 1) in numbers  # counted per episode, the second starting over
    assert any(line in out[out.index(headers[0]) + 1 :][:6] for line in out if "A" in line)  # a frame under it
    assert re.search(r"over 2 episodes, success rate \d\.\d\d$", out[-1]), out[-1]
