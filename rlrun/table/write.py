"""A table from run and sweep folders: find the runs, group those that differ only by seed, compute each
group's statistics and write ``table.md``, ``table.csv``, ``table.json`` and ``curves.png``. The same runs
give the same bytes. ``rlrun-table`` (:mod:`rlrun.cli.table`), sweeps and tuning call :func:`write_tables`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from rlrun.config.errors import UserError
from rlrun.table.groups import group_runs
from rlrun.table.runs import distinct, find_runs

METRICS = ("return", "success")
FILES = ("table.md", "table.csv", "table.json", "curves.png")


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


def written_files(aggregate: bool) -> tuple[str, ...]:
    """The files a table writes (with ``aggregate``, the across-env files too)."""
    if not aggregate:
        return FILES
    from rlrun.table.aggregate_files import AGGREGATE_FILES  # loaded by the table already

    return FILES + AGGREGATE_FILES


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
    checked = None
    if aggregate:  # the references and the folder for the across-env files, checked before any run is read
        from rlrun.table import aggregate_files  # scipy and matplotlib, as the across-env files need them
        from rlrun.table.aggregate import load_references

        checked = load_references(references)
        aggregate_files.check_out(out)
    runs, copies = distinct(find_runs(folders))
    if not runs:
        raise UserError(
            f"no readable runs under {', '.join(map(str, folders))}", "see the warnings above for each run left out"
        )
    from rlrun.table import document  # scipy and matplotlib: only once there are runs to tabulate

    return document.write_files(runs, copies, out, by=by, metric=metric, compare=compare, checked=checked)
