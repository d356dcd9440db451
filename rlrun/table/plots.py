"""Learning curves of a table: evaluation return (or success rate) against env steps, one panel per env.

Each group is drawn as the IQM over its completed runs at each evaluation of ``eval.csv``, with the 95%
bootstrap band of that IQM (the table's statistics, point by point). Runs are aligned by evaluation index (the
k-th evaluation of every run; the x value is their mean env steps) up to the shortest run. The figure is drawn
without pyplot's global state and saved with fixed metadata, so the same data give the same picture.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from rlrun.table.runs import Group
from rlrun.table.stats import curve_band

_LABELS = {"return": "evaluation return", "success": "evaluation success rate"}
_STYLE: dict[str, Any] = {"svg.hashsalt": "rlrun", "svg.fonttype": "path", "path.simplify": False, "font.size": 9}
_LEGEND_LINE = 0.16  # inches a legend line takes in the legend's font
_LABEL_WIDTH = 64  # characters per line of a legend entry: a panel is wider than this in the legend's font


def _label(group: Group, groups: Sequence[Group], runs: int) -> str:
    """A legend entry: the group's name without the ``<env>-`` every group of the panel shares (the title names
    the env), wrapped to the panel's width, and its number of runs."""
    name = group.name
    if len({g.env for g in groups}) == 1 and name.startswith(f"{group.env}-"):
        name = name[len(group.env) + 1 :]
    text = textwrap.fill(f"{name} (n={runs})", _LABEL_WIDTH, break_on_hyphens=False, subsequent_indent="  ")
    return literal(text)


def literal(text: str) -> str:
    """``text`` drawn as it is: matplotlib reads a pair of ``$`` as mathematics, which a name must not start."""
    return text.replace("$", r"\$")


def _curves(group: Group, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Env steps (mean per evaluation index) and a runs x evaluations array of the group's completed runs; a run
    with an evaluation that is not finite is left out (the table's notes name it)."""
    curves = [run.curve for run in group.completed if run.curve and run.curve.timesteps and run.curve.plottable]
    if metric == "success":
        curves = [c for c in curves if all(v is not None for v in c.success_rate)]
    if not curves:
        return None
    length = min(len(c.timesteps) for c in curves)
    steps = np.mean([c.timesteps[:length] for c in curves], axis=0)
    values = np.array([(c.mean_return if metric == "return" else c.success_rate)[:length] for c in curves], float)
    return steps, values


def _panel(ax: Axes, env_id: str, groups: Sequence[Group], metric: str) -> None:
    drawn = 0
    for index, group in enumerate(groups):
        data = _curves(group, metric)
        if data is None:
            continue
        steps, values = data
        centre, low, high = curve_band(values)
        colour = f"C{index % 10}"
        ax.plot(steps, centre, color=colour, marker="o", markersize=3, label=_label(group, groups, len(values)))
        if low is not None and high is not None:
            ax.fill_between(steps, low, high, color=colour, alpha=0.2, linewidth=0)
        drawn += 1
    ax.set_title(literal(env_id))
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"{_LABELS[metric]} (IQM, 95% CI)")
    ax.grid(alpha=0.3)
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 20k, 1M
    if drawn:  # below the panel, so that neither the curves nor a long name are hidden or cut off
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    else:
        ax.text(0.5, 0.5, f"no {_LABELS[metric]} to show", ha="center", va="center", transform=ax.transAxes)


def draw_curves(groups: Sequence[Group], metric: str = "return") -> Figure:
    """The figure of ``curves.png`` for ``groups`` (in table order): one panel per env id, three to a row."""
    envs = sorted({group.env_id for group in groups})
    panels = [[g for g in groups if g.env_id == env_id] for env_id in envs]
    columns = min(3, len(envs))
    rows = -(-len(envs) // columns)
    # a panel is 3.8 inches tall with room for 3 legend lines below it; a row grows with its longest legend
    lines = [sum(_label(g, panel, 0).count("\n") + 1 for g in panel) for panel in panels]
    height = sum(
        3.8 + _LEGEND_LINE * max(0, max(lines[row * columns : (row + 1) * columns]) - 3) for row in range(rows)
    )
    figure = Figure(figsize=(5.2 * columns, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, env_id, panel in zip(axes, envs, panels, strict=False):
        _panel(ax, env_id, panel, metric)
    for ax in axes[len(envs) :]:
        ax.set_visible(False)
    return figure


def plot_curves(groups: Sequence[Group], path: Path, metric: str = "return") -> Path:
    """Write ``curves.png`` for ``groups`` (in table order) to ``path``."""
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        draw_curves(groups, metric).savefig(path, dpi=100, metadata={"Software": None})
    return path
