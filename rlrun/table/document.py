"""The table of runs already found: each group's statistics, the comparison, notes and provenance, written as
``table.md``, ``table.csv``, ``table.json`` and ``curves.png`` (and the across-env files with ``--aggregate``).

:func:`rlrun.table.write.write_tables` finds the runs first and imports this module only when there are some, so a
folder without runs is answered before scipy and matplotlib are loaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record.fields import as_text
from rlrun.record.formats import write_text
from rlrun.table.aggregate import References
from rlrun.table.aggregate_files import aggregate_document, write_aggregate
from rlrun.table.groups import group_runs, note_continued
from rlrun.table.notes import notes
from rlrun.table.outputs import COLUMNS, provenance, render_csv, render_json, render_markdown
from rlrun.table.plots import plot_curves
from rlrun.table.runs import Group, Run
from rlrun.table.stats import (
    configured_level,
    median,
    probability_of_improvement,
    steps_to_threshold,
    summary,
    threshold,
)


def _integral(value: float | None) -> float | int | None:
    return int(value) if value is not None and float(value).is_integer() else value


def _final(run: Run, target: dict[str, Any] | None) -> tuple[int, float | None] | None:
    """The final evaluation's step and score on ``target``'s metric (its step: the run's last, ``timesteps``)."""
    steps = run.record.get("timesteps")
    if target is None or not isinstance(steps, int) or isinstance(steps, bool):
        return None
    return steps, run.score("success" if target["metric"] == "success_rate" else "return")


def _run_entry(run: Run, target: dict[str, Any] | None, out: Path) -> dict[str, Any]:
    return {
        "folder": as_text(Path(os.path.relpath(run.folder.resolve(), out.resolve())).as_posix()),
        "seed": run.record["seed"],
        "status": run.record["status"],
        "return": run.score("return"),
        "success": run.score("success"),
        "steps_to_threshold": steps_to_threshold(run.curve, target, _final(run, target)) if run.completed else None,
        "wall_s": run.record.get("wall_s") if run.completed else None,
        "fps": run.record.get("fps") if run.completed else None,
    }


def _describe(group: Group, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The group's CSV row and its table.json entry (the row's inputs: threshold, runs, overrides)."""
    done = group.completed
    successes = [s for run in done if (s := run.score("success")) is not None]
    reports_success = bool(successes) and len(successes) == len(done)
    target = threshold(group.env_id, reports_success, configured_level(group)) if done else None
    runs = [_run_entry(run, target, out) for run in group.runs]
    reached = [run["steps_to_threshold"] for run in runs if run["steps_to_threshold"] is not None]
    returns = summary([run["return"] for run in runs if run["return"] is not None])
    success = summary(successes if reports_success else [])
    row = {
        "group": group.name,
        "env": group.env,
        "algo": group.algo,
        "seeds_completed": len(done),
        "seeds_planned": group.planned,
        **{f"return_{key}": value for key, value in returns.items()},
        **{f"success_{key}": value for key, value in success.items() if key != "std"},
        "steps_to_threshold": _integral(median(reached)),
        "reached": len(reached) if target is not None else None,
        "wall_s": median([run["wall_s"] for run in runs if run["wall_s"] is not None]),
        "fps": median([run["fps"] for run in runs if run["fps"] is not None]),
    }
    assert tuple(row) == COLUMNS
    entry = {
        "group": group.name,
        "env_id": group.env_id,
        "total_timesteps": group.total_timesteps,
        "overrides": group.overrides,
        "config_hashes": sorted({as_text(run.record["config_hash"]) for run in group.runs}),
        "threshold": target,
        "success_std": success["std"],
        "runs": runs,
    }
    return row, entry


def _compare(groups: Sequence[Group], names: tuple[str, str], metric: str) -> dict[str, Any]:
    by_name = {group.name: group for group in groups}
    samples = []
    for name in names:
        if name not in by_name:
            listed = "\n    ".join(sorted(by_name))
            raise UserError(f"--compare: no group named {name!r}; the groups are:\n    {listed}", "quote group names")
        scores = [s for run in by_name[name].completed if (s := run.score(metric)) is not None]
        if not scores:
            raise UserError(
                f"--compare: group {name!r} has no completed run with a final {metric}",
                "compare groups with completed runs, or use --metric return for envs that report no success",
            )
        samples.append(scores)
    return {"a": names[0], "b": names[1], "metric": metric, **probability_of_improvement(*samples)}


def write_files(
    runs: Sequence[Run],
    copies: Any,
    out: Path,
    *,
    by: Sequence[str] | None,
    metric: str,
    compare: tuple[str, str] | None,
    checked: References | None,
) -> Path:
    """Group ``runs`` (``copies``: the folders counted once, for the notes), compute and write the table files into
    ``out`` (with ``checked`` references, the across-env files too); returns the path of ``table.md``."""
    groups = group_runs(runs, list(by) if by else None)
    note_continued(groups)
    described = [_describe(group, out) for group in groups]
    document: dict[str, Any] = {
        "metric": metric,
        "by": list(by) if by else None,
        "rows": [row for row, _ in described],
        "groups": [entry for _, entry in described],
        "compare": _compare(groups, compare, metric) if compare is not None else None,
        "notes": notes(runs, copies, groups, out),
        "provenance": provenance(runs),
    }
    aggregated = aggregate_document(groups, checked, out) if checked is not None else None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        problem = f"--out {out} cannot be created: {error.strerror or error}"
        raise UserError(problem, "give a folder you can write to") from None
    write_text(out / "table.csv", render_csv(document["rows"]))
    write_text(out / "table.json", render_json(document))
    write_text(out / "table.md", render_markdown(document))
    plot_curves(groups, out / "curves.png", metric)
    if aggregated is not None:
        write_aggregate(aggregated, out)
    return out / "table.md"
