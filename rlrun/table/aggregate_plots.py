"""The aggregate's pictures: ``profiles.png`` (performance profiles, as rliable's ``plot_performance_profiles``
draws them) and ``aggregate.png`` (the four statistics with their intervals per aggregate, as rliable's
``plot_interval_estimates``). Drawn like ``curves.png`` (:mod:`rlrun.table.plots`): no pyplot state, fixed style,
no timestamp in the PNG's metadata, so the same numbers give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rlrun.table.aggregate import STATISTICS
from rlrun.table.plots import literal

_STYLE: dict[str, Any] = {"path.simplify": False, "font.size": 9}
_TITLES = {"iqm": "IQM", "median": "Median", "mean": "Mean", "optimality_gap": "Optimality gap"}


def _save(figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=100, metadata={"Software": None})
    return path


def plot_profiles(document: dict[str, Any], path: Path) -> Path:
    """Fraction of runs with a normalised score above tau, per aggregate, with its 95% stratified-bootstrap band."""
    taus = document["profiles"]["tau"]
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        figure = Figure(figsize=(6.4, 4.2), layout="constrained")
        FigureCanvasAgg(figure)
        ax = figure.subplots()
        for index, row in enumerate(document["rows"]):
            profile = document["profiles"]["groups"][row["group"]]
            colour = f"C{index % 10}"
            ax.plot(taus, profile["fraction"], color=colour, label=literal(f"{row['group']} ({row['runs']} runs)"))
            if profile["low"] is not None:
                ax.fill_between(taus, profile["low"], profile["high"], color=colour, alpha=0.2, linewidth=0)
        for tau, text in ((0.0, "random"), (1.0, "reference")):
            ax.axvline(tau, color="grey", linewidth=0.8, linestyle=":")
            ax.text(tau, 1.02, text, ha="center", va="bottom", fontsize="small", color="grey")
        ax.set_xlim(taus[0], taus[-1])
        ax.set_ylim(0, 1.08)
        ax.set_xlabel("normalised score τ")
        ax.set_ylabel("fraction of runs with score > τ")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="lower left")
        return _save(figure, path)


def plot_estimates(document: dict[str, Any], path: Path) -> Path:
    """One panel per statistic: each aggregate's 95% interval as a bar and its point estimate as a tick."""
    rows = document["rows"]
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        figure = Figure(figsize=(3.0 * len(STATISTICS), 0.9 + 0.45 * len(rows)), layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.subplots(1, len(STATISTICS), sharey=True, squeeze=False).ravel()
        for ax, statistic in zip(axes, STATISTICS, strict=True):
            for index, row in enumerate(rows):
                colour, y = f"C{index % 10}", len(rows) - 1 - index
                low, high = row[f"{statistic}_low"], row[f"{statistic}_high"]
                if low is not None:
                    ax.barh(y, high - low, left=low, height=0.6, color=colour, alpha=0.75)
                ax.vlines(row[statistic], y - 0.3, y + 0.3, color="black", linewidth=1.5)
            ax.set_title(_TITLES[statistic])
            ax.set_xlabel("normalised score")
            ax.grid(axis="x", alpha=0.3)
        axes[0].set_yticks(range(len(rows)), [literal(row["group"]) for row in reversed(rows)])
        axes[0].set_ylim(-0.6, len(rows) - 0.4)
        return _save(figure, path)
