"""A table from run and sweep folders: find the runs, group those that differ only by seed, compute each
group's statistics and write ``table.md``, ``table.csv``, ``table.json`` and ``curves.png``. The same runs
give the same bytes. ``rlrun-table`` (:mod:`rlrun.cli.table`), sweeps and tuning call :func:`write_tables`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record.fields import as_text
from rlrun.record.formats import write_text
from rlrun.table.aggregate import load_references
from rlrun.table.aggregate_files import aggregate_document, check_out, write_aggregate
from rlrun.table.groups import group_runs, note_continued
from rlrun.table.notes import notes
from rlrun.table.outputs import COLUMNS, provenance, render_csv, render_json, render_markdown
from rlrun.table.plots import plot_curves
from rlrun.table.runs import Group, Run, distinct, find_runs
from rlrun.table.stats import (
    configured_level,
    median,
    probability_of_improvement,
    steps_to_threshold,
    summary,
    threshold,
)

METRICS = ("return", "success")
FILES = ("table.md", "table.csv", "table.json", "curves.png")


def _integral(value: float | None) -> float | int | None:
    return int(value) if value is not None and float(value).is_integer() else value


def _run_entry(run: Run, target: dict[str, Any] | None, out: Path) -> dict[str, Any]:
    return {
        "folder": as_text(Path(os.path.relpath(run.folder.resolve(), out.resolve())).as_posix()),
        "seed": run.record["seed"],
        "status": run.record["status"],
        "return": run.score("return"),
        "success": run.score("success"),
        "steps_to_threshold": steps_to_threshold(run.curve, target) if run.completed else None,
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


def _check_out(out: Path) -> None:
    """Refuse a folder for the table files that is a file, lies under one, cannot be written (read-only), or
    holds a folder named like a table file: found before anything is read or written."""
    existing = out.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is" if existing == out.absolute() else f"lies under {existing}, which is"
        raise UserError(
            f"--out {out} {where} an existing file, not a folder for the table files",
            "give --out a folder (it is created if missing); nothing was written",
        )
    try:  # the folder (or, for one still to be made, the folder it is made in) takes files: probe it
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise UserError(
            f"--out {out} cannot be written: {existing}: {error.strerror or error}",
            "give --out a folder you can write, e.g. --out ~/tables (it is created if missing); nothing was written",
        ) from None
    taken = [name for name in FILES if (out / name).exists() and not (out / name).is_file()]
    if taken:
        raise UserError(
            f"--out {out} holds {', '.join(taken)} as something other than a file", "give --out another folder"
        )


def _check_compare(compare: tuple[str, str] | None) -> None:
    if compare is not None and compare[0] == compare[1]:
        raise UserError(
            f"--compare names group {compare[0]!r} twice: a group compared with itself always gives 0.5",
            "name two different groups, e.g. --compare 'gridworld-ppo algo.n_steps=64' gridworld-ppo",
        )


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


def group_names(folders: Sequence[Path], by: Sequence[str] | None = None) -> list[str]:
    """The names of the groups a table of ``folders`` would have, in table order (what ``compare=`` takes)."""
    runs, _ = distinct(find_runs([Path(f) for f in folders]))
    return [group.name for group in group_runs(runs, list(by) if by else None)]


def write_tables(
    folders: Sequence[Path],
    out: Path,
    *,
    by: Sequence[str] | None = None,
    metric: str = "return",
    compare: tuple[str, str] | None = None,
    aggregate: bool = False,
    references: Path | None = None,
) -> Path:
    """Write ``table.md``, ``table.csv``, ``table.json`` and ``curves.png`` for the runs under ``folders``;
    with ``aggregate``, also the across-env files of :mod:`rlrun.table.aggregate_files` (normalised by
    ``references``, default the shipped ``conf/benchmark/references.yaml``).

    Returns the path of ``table.md``. Raises :class:`~rlrun.config.errors.UserError` for a folder without runs,
    an unknown ``--by`` key or ``--compare`` group, a group compared with itself, an unknown metric, an
    ``out`` that cannot be a folder, or (``aggregate``) a bad references file or no run it covers; nothing is
    written then.
    """
    if metric not in METRICS:
        raise UserError(f"metric {metric!r} is not one of {', '.join(METRICS)}", "use return or success")
    folders = [Path(folder) for folder in folders]
    out = Path(out)
    _check_out(out)
    _check_compare(compare)
    checked = load_references(references) if aggregate else None
    if aggregate:
        check_out(out)
    runs, copies = distinct(find_runs(folders))
    if not runs:
        raise UserError(
            f"no readable runs under {', '.join(map(str, folders))}", "see the warnings above for each run left out"
        )
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
