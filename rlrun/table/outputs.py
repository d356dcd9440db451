"""The table's files: ``table.csv``, ``table.json`` and ``table.md``, with their provenance; BENCHMARKS.md sections.

Nothing here reads a clock: the same rows and provenance give the same bytes. Every file is written under a
temporary name and renamed, so a reader never sees half a table.
"""

from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import rlrun
from rlrun.record.fields import as_text
from rlrun.record.formats import write_text
from rlrun.record.provenance import package_version, source_commit
from rlrun.table.runs import Run
from rlrun.table.stats import N_RESAMPLES, SEED

COLUMNS = (
    "group",
    "env",
    "algo",
    "seeds_completed",
    "seeds_planned",
    "return_mean",
    "return_std",
    "return_iqm",
    "return_iqm_low",
    "return_iqm_high",
    "success_mean",
    "success_iqm",
    "success_iqm_low",
    "success_iqm_high",
    "steps_to_threshold",
    "reached",
    "wall_s",
    "fps",
)
DASH = "–"  # a value that does not exist, in Markdown
_TOOLS = ("scipy", "numpy", "matplotlib")
MAX_COMMANDS_MD = 10  # table.md lists this many commands; table.json lists them all
WIDTH = 80  # the prose under a table: lines of at most this many characters (a terminal's width)


def provenance(runs: Sequence[Run]) -> dict[str, Any]:
    """What made the table and its runs: versions, commits, hosts, commands (sorted sets, no timestamps)."""
    versions: dict[str, set[str]] = {}
    for run in runs:
        for package, version in (run.record.get("versions") or {}).items():
            versions.setdefault(as_text(package), set()).add(as_text(version))

    def values(field: str) -> list[str]:
        return sorted({as_text(run.record[field]) for run in runs if run.record.get(field)})

    return {
        "rlrun": rlrun.__version__,
        "git": source_commit(),
        "packages": {name: package_version(name) for name in _TOOLS},
        "statistics": (
            f"IQM = scipy.stats.trim_mean(scores, 0.25); 95% CI = scipy.stats.bootstrap, percentile, "
            f"{N_RESAMPLES} resamples, numpy.random.default_rng({SEED}); std with ddof 0"
        ),
        "runs": {
            "versions": {package: sorted(found) for package, found in sorted(versions.items())},
            "rlrun_commit": values("rlrun_commit"),  # the code that trained each run (recorded since 0.1.0)
            "git": values("git"),
            "hosts": values("host"),
            "commands": values("command"),
        },
    }


def _csv_cell(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def render_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """``table.csv``: DESIGN.md's columns in order (or ``columns``); a value that does not exist is an empty
    cell, a float written exactly (``repr``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row[column]) for column in columns])
    return out.getvalue()


def render_json(document: dict[str, Any]) -> str:
    """``table.json``: rows, runs, comparison and provenance; a value that does not exist is ``null``."""
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def code(text: str, cell: bool = True) -> str:
    """``text`` as a Markdown code span: fenced with more backticks than it holds in a row, so none of its own
    ends it; in a table ``cell``, its pipes escaped (GFM splits a row at every other pipe, in code spans too)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    shown = text.replace("|", "\\|") if cell else text
    return f"{fence}{pad}{shown}{pad}{fence}"


def plain(text: str) -> str:
    """``text`` (a name, already :func:`~rlrun.record.fields.as_text`) as plain Markdown: no HTML of its own, no
    pipe that would end a cell."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _num(value: float | None, digits: int | None = None) -> str:
    """A score for reading: one decimal from 100 up, else two; ``–`` when it does not exist."""
    if value is None:
        return DASH
    if digits is None:
        digits = 1 if abs(value) >= 100 else 2
    return f"{value:.{digits}f}"


def _iqm_cell(row: dict[str, Any], prefix: str) -> str:
    if row[f"{prefix}_iqm"] is None:
        return DASH
    low, high = row[f"{prefix}_iqm_low"], row[f"{prefix}_iqm_high"]
    interval = DASH if low is None else f"[{_num(low)}, {_num(high)}]"
    return f"{_num(row[f'{prefix}_iqm'])} {interval}"


def _steps_cell(row: dict[str, Any]) -> str:
    if row["reached"] is None:
        return DASH
    steps = DASH if row["steps_to_threshold"] is None else f"{row['steps_to_threshold']:,.0f}"
    return f"{steps} ({row['reached']}/{row['seeds_completed']})"


def _markdown_rows(rows: Sequence[dict[str, Any]]) -> list[str]:
    success = any(row["success_iqm"] is not None for row in rows)
    header = ["group", "seeds", "return mean ± std", "return IQM [95% CI]"]
    header += ["success IQM [95% CI]"] if success else []
    header += ["steps to threshold (reached)", "wall s / run", "steps/s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        mean, std = row["return_mean"], row["return_std"]
        mean = DASH if mean is None else f"{_num(mean)} ± {_num(std, 1 if abs(mean) >= 100 else 2)}"
        cells = [code(row["group"]), f"{row['seeds_completed']}/{row['seeds_planned']}", mean]
        cells += [_iqm_cell(row, "return")] + ([_iqm_cell(row, "success")] if success else [])
        cells += [_steps_cell(row), _num(row["wall_s"], 1), _num(row["fps"], 0)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _thresholds(groups: Sequence[dict[str, Any]]) -> str:
    found = {}
    for group in groups:
        if (target := group["threshold"]) is not None:
            kind = "success rate" if target["metric"] == "success_rate" else "return"
            found[group["env_id"]] = f"{plain(group['env_id'])}: {kind} ≥ {target['value']:g}"
    return "; ".join(found[env] for env in sorted(found)) or "none known"


def _footer(prov: dict[str, Any]) -> list[str]:
    runs = prov["runs"]
    packages = plain(", ".join(f"{name} {' / '.join(found)}" for name, found in runs["versions"].items()))
    tools = ", ".join(f"{name} {version}" for name, version in prov["packages"].items())
    commit = f" (git {prov['git'][:12]})" if prov["git"] else ""
    codes = plain(", ".join(c[:12] for c in runs.get("rlrun_commit", [])))
    commits, hosts = plain(", ".join(c[:12] for c in runs["git"])), plain(", ".join(runs["hosts"]))
    lines = [
        *_wrapped(
            f"<sub>Table by rlrun {prov['rlrun']}{commit} with {tools}. Runs: {packages or 'versions unknown'};"
            f" rlrun's code at git {codes or 'unknown'}; started in folders at git {commits or 'unknown'};"
            f" hosts {hosts or 'unknown'}. Commands:</sub>"
        ),
        "",
    ]
    commands = runs["commands"]
    lines += [f"- {code(command, cell=False)}" for command in commands[:MAX_COMMANDS_MD]] or ["- unknown"]
    if len(commands) > MAX_COMMANDS_MD:
        lines.append(f"- and {len(commands) - MAX_COMMANDS_MD} more (table.json lists them all)")
    return lines


def _wrapped(paragraph: str) -> list[str]:
    """A paragraph as lines of at most :data:`WIDTH` characters, broken between words and never inside a code span
    (a terminal shows the lines as they are; Markdown joins them again)."""
    kept = re.sub(r"(`+)(.*?)\1", lambda span: span.group(0).replace(" ", _SPACE), paragraph)
    lines = textwrap.wrap(kept, WIDTH, break_long_words=False, break_on_hyphens=False)
    return [line.replace(_SPACE, " ") for line in lines]


_SPACE = "\0"  # a space inside a code span while a paragraph is wrapped


def render_markdown(document: dict[str, Any]) -> str:
    """``table.md``: the table, how to read it, the comparison if asked for, and the provenance footer."""
    rows, groups = document["rows"], document["groups"]
    lines = (
        _markdown_rows(rows)
        + [""]
        + _wrapped(
            "Score of a run: its final evaluation (`final` in run.json). Over the completed runs of a group: mean ± std"
            " (ddof 0); IQM, rliable's interquartile mean (`scipy.stats.trim_mean(scores, 0.25)`: the mean after 25% of"
            " the runs are trimmed from each end, so 4 of 6 runs count, or 6 of 10), with its 95% bootstrap interval"
            " (percentile, 10,000"
            f" resamples, seed {SEED}; {DASH} with fewer than 2 runs). Seeds: completed/planned. Steps to threshold:"
            " the first evaluation that reached it (the periodic ones of eval.csv, then the final one), median over the"
            f" runs that did (how many did). Thresholds: {_thresholds(groups)}. Wall time and steps per second: median"
            " per run."
        )
    )
    if (compare := document.get("compare")) is not None:
        interval = DASH if compare["low"] is None else f"[{compare['low']:.2f}, {compare['high']:.2f}]"
        lines += [""] + _wrapped(
            f"Probability of improvement (final {compare['metric']}): P({code(compare['a'], cell=False)} >"
            f" {code(compare['b'], cell=False)}) ="
            f" {compare['probability']:.2f}, 95% CI {interval} (over all pairs of runs, ties count half;"
            " bootstrap over both groups' runs)."
        )
    lines += [line for note in document.get("notes", []) for line in ("", *_wrapped(plain(note)))]
    return "\n".join([*lines, "", *_footer(document["provenance"])]) + "\n"


def write_section(path: Path, name: str, body: str, title: str = "# Benchmarks\n") -> None:
    """Put ``body`` between ``<!-- rlrun:begin NAME -->`` and ``<!-- rlrun:end NAME -->`` in ``path``.

    Only that section changes; a missing section is appended, a missing file is created with ``title``.
    """
    begin, end = f"<!-- rlrun:begin {name} -->", f"<!-- rlrun:end {name} -->"
    block = f"{begin}\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else title
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    found = pattern.search(text)
    text = text[: found.start()] + block + text[found.end() :] if found else text.rstrip("\n") + f"\n\n{block}\n"
    write_text(path, text)
