"""Learning curves (rlrun/table/plots.py): one panel per env, three to a row, the same picture for the same runs."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rlrun.table.groups import group_runs
from rlrun.table.plots import plot_curves
from rlrun.table.runs import find_runs
from tests.rlrun.table.helpers import make_run

ENVS = [("cartpole", "CartPole-v1"), ("gw", "rlrun/GridWorld-v0"), ("pendulum", "Pendulum-v1"), ("mc", "Acrobot-v1")]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height in pixels, from the PNG's header."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(("n_envs", "size"), [(1, (520, 380)), (2, (1040, 380)), (4, (1560, 760))])
def test_one_panel_per_env_three_to_a_row(tmp_path: Path, n_envs: int, size: tuple[int, int]) -> None:
    for env in ENVS[:n_envs]:
        for seed in range(2):
            make_run(tmp_path / f"runs/{env[0]}/seed-{seed}", seed, 1.0 + seed, success=0.5, env=env)
    groups = group_runs(find_runs([tmp_path / "runs"]))
    assert plot_curves(groups, tmp_path / "curves.png") == tmp_path / "curves.png"
    assert png_size(tmp_path / "curves.png") == size  # 5.2 x 3.8 inches a panel at 100 dpi


def test_the_same_runs_give_the_same_bytes_and_each_metric_its_own_picture(tmp_path: Path) -> None:
    for seed, score in enumerate([1.0, 4.0, 2.0]):
        make_run(tmp_path / f"runs/gw/seed-{seed}", seed, score, success=score / 4, env=ENVS[1])
    groups = group_runs(find_runs([tmp_path / "runs"]))
    first, second = plot_curves(groups, tmp_path / "a.png"), plot_curves(groups, tmp_path / "b.png")
    success = plot_curves(groups, tmp_path / "success.png", metric="success")
    assert first.read_bytes() == second.read_bytes()
    assert success.read_bytes() != first.read_bytes()


def test_runs_without_a_success_rate_still_get_their_panel(tmp_path: Path) -> None:
    make_run(tmp_path / "runs/cartpole/seed-0", 0, 10.0)  # CartPole reports no success
    groups = group_runs(find_runs([tmp_path / "runs"]))
    returns = plot_curves(groups, tmp_path / "return.png")
    success = plot_curves(groups, tmp_path / "success.png", metric="success")  # "no ... to show" in the panel
    assert png_size(success) == png_size(returns) and success.read_bytes() != returns.read_bytes()
