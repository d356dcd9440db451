"""What a table says about the runs it used, beside its numbers (``table.md``'s notes, ``table.json``'s ``notes``):
copies of one run counted once, records not signed under this user's key, curves that leave a run out, and seeds
planned taken from a ``sweep.json`` not signed. A table of runs this user's rlrun wrote has none.

Each note is one line naming the folders (relative to the table's folder, as text), so the same runs give the same
bytes; at most :data:`NAMED` folders a note, the rest counted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rlrun.record.fields import as_text
from rlrun.table.runs import MAX_SCORE, Group, Run

NAMED = 10  # folders named in one note; table.json's runs list every one


def _where(path: Path, out: Path) -> str:
    return as_text(Path(os.path.relpath(path.resolve(), out.resolve())).as_posix())


def _listed(items: Sequence[str]) -> str:
    more = f" and {len(items) - NAMED} more" if len(items) > NAMED else ""
    return ", ".join(items[:NAMED]) + more


def copies_note(copies: Sequence[tuple[Run, Run]], out: Path) -> list[str]:
    """The copies of runs left out (:func:`rlrun.table.runs.distinct`), each with the run it copies."""
    if not copies:
        return []
    named = [f"{_where(copy.folder, out)} (as {_where(kept.folder, out)})" for copy, kept in copies]
    return [
        f"Counted once: {len(copies)} folder(s) hold a run already counted (the same run id, or the same run.json):"
        f" {_listed(named)}."
    ]


def unsigned_note(runs: Sequence[Run], out: Path) -> list[str]:
    """The runs whose ``run.json`` is not signed under this user's key (received, written by hand, or changed),
    by reason."""
    reasons: dict[str, list[str]] = {}
    for run in runs:
        if run.unsigned is not None:
            reasons.setdefault(as_text(run.unsigned), []).append(_where(run.folder, out))
    if not reasons:
        return []
    count = sum(len(folders) for folders in reasons.values())
    named = "; ".join(f"{_listed(folders)} ({reason})" for reason, folders in sorted(reasons.items()))
    return [
        f"Not signed with your trust key: {count} run(s) whose run.json rlrun cannot vouch for (received, written"
        f" by hand or changed since), counted as recorded: {named}."
    ]


def curves_note(groups: Sequence[Group], out: Path) -> list[str]:
    """The completed runs the curves leave out: an evaluation that is not finite, or beyond :data:`MAX_SCORE`."""
    left = sorted(
        _where(run.folder, out)
        for group in groups
        for run in group.completed
        if run.curve is not None and not run.curve.plottable
    )
    if not left:
        return []
    return [
        f"Curves leave out {len(left)} run(s) whose eval.csv holds an evaluation that is not finite (or beyond"
        f" ±{MAX_SCORE:g}): {_listed(left)}."
    ]


def plans_note(groups: Sequence[Group], out: Path) -> list[str]:
    """The ``sweep.json`` files not signed that add seeds planned."""
    plans = sorted({_where(path, out) for group in groups for path in group.unsigned_plans})
    if not plans:
        return []
    return [f"Seeds planned include jobs listed by a sweep.json not signed with your trust key: {_listed(plans)}."]


def notes(runs: Sequence[Run], copies: Sequence[tuple[Run, Run]], groups: Sequence[Group], out: Path) -> list[str]:
    """Every note of a table, in a fixed order."""
    return [
        *copies_note(copies, out),
        *unsigned_note(runs, out),
        *plans_note(groups, out),
        *curves_note(groups, out),
    ]
