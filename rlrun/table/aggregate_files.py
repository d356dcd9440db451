"""The aggregate's files (``rlrun-table --aggregate``): ``aggregate.md``, ``aggregate.csv``, ``aggregate.json``,
``profiles.png`` and ``aggregate.png`` (:mod:`rlrun.table.aggregate` computes them). Nothing here reads a clock,
paths are relative to the output folder and the references file is named as given with its sha256, so the same
runs and references give the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record.formats import write_text
from rlrun.table import outputs
from rlrun.table.aggregate import (
    ALL,
    GAMMA,
    N_RESAMPLES,
    SEED,
    SHIPPED,
    STATISTICS,
    Aggregate,
    References,
    aggregates_of,
    compute,
    profile_taus,
    tasks_of,
)
from rlrun.table.aggregate_plots import plot_estimates, plot_profiles
from rlrun.table.outputs import DASH, provenance
from rlrun.table.runs import Group

AGGREGATE_FILES = ("aggregate.md", "aggregate.csv", "aggregate.json", "profiles.png", "aggregate.png")
AGGREGATE_COLUMNS = (
    "group",
    "algo",
    "tasks",
    "runs",
    "envs",
    *(f"{statistic}{suffix}" for statistic in STATISTICS for suffix in ("", "_low", "_high")),
)
LABELS = {"iqm": "IQM", "median": "median", "mean": "mean", "optimality_gap": "optimality gap"}
METHOD = (
    "per run: (final return - random) / (reference - random); rliable's definitions over an aggregate's runs:"
    " IQM = scipy.stats.trim_mean of all runs' scores pooled, 0.25; median and mean of the per-task mean scores;"
    f" optimality gap = mean of max(0, {GAMMA:g} - score) over all runs; 95% CI: stratified bootstrap (runs resampled"
    f" within each task), percentile, {N_RESAMPLES} resamples, numpy.random.default_rng({SEED}) per aggregate;"
    " performance profile: fraction of runs with score > tau, band from the same resamples"
)


def check_out(out: Path) -> None:
    """Refuse an ``out`` holding a folder (or other non-file) named like an aggregate file."""
    taken = [name for name in AGGREGATE_FILES if (out / name).exists() and not (out / name).is_file()]
    if taken:
        raise UserError(
            f"--out {out} holds {', '.join(taken)} as something other than a file", "give --out another folder"
        )


def _task_entry(task: Any, out: Path) -> dict[str, Any]:
    return {
        "group": task.group.name,
        "env_id": task.group.env_id,
        "random": task.random,
        "reference": task.reference,
        "reference_from": task.basis,
        "runs": [
            {**run, "folder": Path(os.path.relpath(run["folder"].resolve(), out.resolve())).as_posix()}
            for run in task.runs
        ],
    }


def _row(aggregate: Aggregate) -> dict[str, Any]:
    row: dict[str, Any] = {
        "group": aggregate.name,
        "algo": aggregate.algo,
        "tasks": len(aggregate.tasks),
        "runs": sum(len(task.runs) for task in aggregate.tasks),
        "envs": " ".join(sorted({task.group.env_id.rpartition(":")[2] for task in aggregate.tasks})),
    }
    for statistic, estimate in aggregate.estimates.items():
        row |= {
            statistic: estimate["value"],
            f"{statistic}_low": estimate["low"],
            f"{statistic}_high": estimate["high"],
        }
    assert tuple(row) == AGGREGATE_COLUMNS
    return row


def aggregate_document(groups: Sequence[Group], references: References, out: Path) -> dict[str, Any]:
    """Everything the aggregate files show; raises UserError when no run can be normalised."""
    tasks, left_out = tasks_of(groups, references)
    if not tasks:
        raise UserError(
            f"--aggregate: no completed run's env has both a random score and a reference in {references.name}",
            "add the env ids named above to that file (or give --references FILE); nothing was written",
        )
    aggregates = aggregates_of(tasks)
    taus = profile_taus(aggregates)
    for aggregate in aggregates:
        compute(aggregate, taus)
    runs = [run for task in tasks for run in task.group.completed]
    return {
        "score": "final.mean_return",
        "references": {"file": _named(references.name, out), "sha256": references.sha256},
        "method": METHOD,
        "rows": [_row(aggregate) for aggregate in aggregates],
        "groups": [
            {
                "group": a.name,
                "algo": a.algo,
                "overrides": a.overrides,
                "tasks": [_task_entry(task, out) for task in a.tasks],
            }
            for a in aggregates
        ],
        "profiles": {"tau": [float(t) for t in taus], "groups": {a.name: a.profile for a in aggregates}},
        "left_out": left_out,
        "provenance": {**provenance(runs), "statistics": METHOD},
    }


def _named(name: str, out: Path) -> str:
    """The references file as the documents name it: the shipped one by its place in rlrun, others relative to
    ``out`` (so moving the whole folder keeps the bytes)."""
    if name == SHIPPED:
        return name
    return Path(os.path.relpath(Path(name).resolve(), out.resolve())).as_posix()


def render_csv(rows: Sequence[dict[str, Any]]) -> str:
    """``aggregate.csv``: one row per aggregate, :data:`AGGREGATE_COLUMNS`; no interval is an empty cell."""
    return outputs.render_csv(rows, AGGREGATE_COLUMNS)


def _estimate(row: dict[str, Any], statistic: str) -> str:
    low, high = row[f"{statistic}_low"], row[f"{statistic}_high"]
    interval = DASH if low is None else f"[{low:.2f}, {high:.2f}]"
    return f"{row[statistic]:.2f} {interval}"


def _score(value: float) -> str:
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"


def render_markdown(document: dict[str, Any]) -> str:
    """``aggregate.md``: the aggregates, their tasks with the random and reference scores used, how to read it."""
    header = ["aggregate", "tasks", "runs", *(f"{LABELS[s]} [95% CI]" for s in STATISTICS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in document["rows"]:
        cells = [outputs.code(row["group"]), str(row["tasks"]), str(row["runs"])]
        lines.append("| " + " | ".join(cells + [_estimate(row, s) for s in STATISTICS]) + " |")
    lines += ["", "| aggregate | task (table group) | runs | random | reference (from) | mean normalised score |"]
    lines.append("|---|---|---|---|---|---|")
    for group in document["groups"]:
        if group["group"] == ALL:  # the tasks of the other aggregates again
            continue
        for task in group["tasks"]:
            mean = sum(run["normalised"] for run in task["runs"]) / len(task["runs"])
            reference = f"{_score(task['reference'])} ({task['reference_from']})"
            lines.append(
                f"| {outputs.code(group['group'])} | {outputs.code(task['group'])} | {len(task['runs'])}"
                f" | {_score(task['random'])}"
                f" | {reference} | {mean:.2f} |"
            )
    references = document["references"]
    lines += [
        "",
        f"Scores normalised per run: (final return - random) / (reference - random), so a random policy scores 0"
        f" and the reference 1; references from `{references['file']}` (sha256 {references['sha256'][:12]}):"
        " `algos.<algo>` is the figure for the run's algorithm, `reference` the env's. Aggregates: the table's groups"
        " (tasks) of one algorithm and the same overrides but the env's"
        + (f"; `{ALL}`: every task" if document["rows"][-1]["group"] == ALL else "")
        + f". Statistics ({DASH}: fewer than 2 runs): {document['method']}.",
    ]
    for left in document["left_out"]:
        missing = " or ".join(left["missing"])
        lines += ["", f"Left out: {left['runs']} run(s) of {outputs.plain(left['env_id'])} (no {missing})."]
    prov = document["provenance"]
    tools = ", ".join(f"{name} {version}" for name, version in prov["packages"].items())
    commit = f" (git {prov['git'][:12]})" if prov["git"] else ""
    lines += ["", f"<sub>Aggregate by rlrun {prov['rlrun']}{commit} with {tools}; runs: see table.md.</sub>"]
    return "\n".join(lines) + "\n"


def write_aggregate(document: dict[str, Any], out: Path) -> Path:
    """Write the five aggregate files of ``document`` (:func:`aggregate_document`) into ``out``; returns
    ``aggregate.md``'s path."""
    write_text(out / "aggregate.csv", render_csv(document["rows"]))
    write_text(out / "aggregate.json", json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n")
    write_text(out / "aggregate.md", render_markdown(document))
    plot_profiles(document, out / "profiles.png")
    plot_estimates(document, out / "aggregate.png")
    return out / "aggregate.md"
