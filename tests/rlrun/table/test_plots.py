"""Learning curves (rlrun/table/plots.py): one panel per env, three to a row, the same picture for the same runs."""

from __future__ import annotations

import struct
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from rlrun.table import plots
from rlrun.table.groups import group_runs
from rlrun.table.plots import draw_curves, plot_curves
from rlrun.table.runs import Group, find_runs
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


def _legend_and_panel_boxes(groups: list[Group]) -> list[tuple[Bbox, Bbox, Bbox]]:
    """Per panel of the curves figure, the legend's, the panel's and the figure's boxes in pixels (at 100 dpi)."""
    with matplotlib.rc_context(plots._STYLE):
        figure = draw_curves(groups)
        figure.set_dpi(100)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
        return [
            (ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer), figure.bbox)
            for ax in figure.axes
            if ax.get_visible()
        ]


def test_long_group_names_fit_their_panel_below_the_curves(tmp_path: Path) -> None:
    """Legends of gym/family runs (long ids and overrides) stay inside the panel's width and the figure, below the
    axes, so they never hide the curves or spill into the next panel."""
    envs = [("fetchreach", "gymnasium_robotics:FetchReach-v4"), ("fetchreach-v4", "gymnasium_robotics:FetchReach-v4")]
    for k, lr in enumerate(["0.001", "0.0003", "0.003"]):
        net = "[256,256,256]" if k else "[64,64]"
        overrides = [f"algo.learning_rate={lr}", f"algo.policy_kwargs={{net_arch:{net}}}", f"env.n_envs={k + 1}"]
        for seed in range(2):
            folder = tmp_path / f"runs/{k}/seed-{seed}"
            make_run(folder, seed, 1.0, env=envs[k % 2], config_hash=str(k) * 64, overrides=overrides)
    groups = group_runs(find_runs([tmp_path / "runs"]))
    assert max(len(group.name) for group in groups) > 70  # longer than a panel is wide in the legend's font
    for legend, panel, figure in _legend_and_panel_boxes(groups):
        assert legend.width <= panel.width + 1 and legend.x0 >= 0 and legend.x1 <= figure.width
        assert legend.y1 <= panel.y0 and legend.y0 >= -1  # below the axes, inside the figure (to a pixel)
    plot_curves(groups, tmp_path / "curves.png")


def test_panel_titles_and_legends_carry_the_env_id(tmp_path: Path) -> None:
    """Runs of env=gym env.id=Acrobot-v1 (run.json env "acrobot-v1"), and older ones whose run.json says "gym",
    are one group named after the id, in a panel titled with the id."""
    make_run(tmp_path / "runs/new/seed-0", 0, -90.0, env=("acrobot-v1", "Acrobot-v1"))
    make_run(tmp_path / "runs/old/seed-1", 1, -95.0, env=("gym", "Acrobot-v1"))
    groups = group_runs(find_runs([tmp_path / "runs"]))
    assert [group.name for group in groups] == ["acrobot-v1-ppo"] and len(groups[0].runs) == 2
    with matplotlib.rc_context(plots._STYLE):
        ax = Figure().subplots()
        plots._panel(ax, groups[0].env_id, groups, "return")
    assert ax.get_title() == "Acrobot-v1"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["ppo (n=2)"]
