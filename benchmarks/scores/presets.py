"""Write the preset benchmark's table into BENCHMARKS.md (its ``presets`` section, nothing else).

The benchmark is a shipped sweep config: every verified preset over seeds 0-9, two jobs at a time with the
joblib launcher (about an hour on 2 cores; Pendulum SAC alone about 50 minutes). Then this script runs
``rlrun-table`` on the sweep, keeps its files (``curves.png`` included) in ``benchmarks/results/presets/``
with ``section.json`` (the machine, the wall time and the RL Zoo comparison, which need the sweep's runs), and
rewrites the section with the table, RL Zoo's published figures next to the same statistic for our runs, the
machine, the versions and the wall time of the whole benchmark. ``--kept`` rewrites ``table.md`` and the
section from the kept files alone (no sweep needed; e.g. after rlrun-table's text changed)::

    rlrun -m +benchmark=presets                        # outputs/sweeps/presets/; re-running resumes or skips
    python -m benchmarks.scores.presets                # or: ... <sweep folder>
    python -m benchmarks.scores.presets --kept         # from benchmarks/results/presets/
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, cpu, wall_time
from rlrun.config.errors import UserError, report_user_errors
from rlrun.record.formats import write_text
from rlrun.table.outputs import render_markdown, write_section
from rlrun.table.write import write_tables

ROOT = Path(__file__).resolve().parents[2]
KEPT = RESULTS / "presets"
COMMAND = "rlrun -m +benchmark=presets"
# RL Baselines3 Zoo's published results (benchmark.md): one trained agent, mean ± std over its evaluation episodes.
ZOO = {
    ("cartpole", "ppo"): {"mean": 500.0, "std": 0.0, "steps": 100_000},
    ("pendulum", "sac"): {"mean": -157.0, "std": 89.0, "steps": 20_000},
}


def _episode_stats(group: dict[str, Any], out: Path) -> dict[str, Any] | None:
    """Mean ± std over all final-evaluation episodes of all seeds, and the lowest and highest seed's mean ± std."""
    import numpy as np

    per_seed = []
    for run in group["runs"]:
        if run["status"] == "completed":
            final = json.loads((out / run["folder"] / "run.json").read_text())["final"]
            per_seed.append((final["mean_return"], final["std_return"], final["returns"]))
    if not per_seed:
        return None
    pooled = np.concatenate([returns for _, _, returns in per_seed])
    low, high = min(per_seed, key=lambda s: s[0]), max(per_seed, key=lambda s: s[0])
    return {
        "mean": float(pooled.mean()),
        "std": float(pooled.std()),
        "low": low[:2],
        "high": high[:2],
        "n": len(per_seed),
    }


def _score(mean: float, std: float) -> str:
    digits = 0 if abs(mean) >= 100 else 1
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def zoo_comparison(document: dict[str, Any], out: Path) -> list[str]:
    """Markdown lines: RL Zoo's figure and ours for the pairs it publishes."""
    lines = [
        "| preset | budget | RL Zoo (1 agent) | rlrun, all seeds' final episodes | rlrun, lowest / highest seed |",
        "|---|---|---|---|---|",
    ]
    for row, group in zip(document["rows"], document["groups"], strict=True):
        zoo = ZOO.get((row["env"], row["algo"]))
        ours = _episode_stats(group, out) if zoo is not None else None
        if zoo is None or ours is None:
            continue
        low, high = (f"{_score(*ours[k])}" for k in ("low", "high"))
        lines.append(
            f"| `{row['group']}` | {group['total_timesteps']:,} steps (Zoo: {zoo['steps']:,})"
            f" | {_score(zoo['mean'], zoo['std'])} | {_score(ours['mean'], ours['std'])} ({ours['n']} seeds)"
            f" | {low} / {high} |"
        )
    return lines


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def run_facts(sweep: Path, out: Path, document: dict[str, Any]) -> dict[str, Any]:
    """What the section needs of the sweep beside its table: the machine, the wall time, the RL Zoo comparison."""
    system = f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    return {"machine": f"{cpu()}, {system}", "wall_time": wall_time(sweep), "zoo": zoo_comparison(document, out)}


def section(facts: dict[str, Any], out: Path, table: str, benchmarks_md: Path) -> str:
    """The body of BENCHMARKS.md's ``presets`` section (links relative to ``benchmarks_md``)."""
    curves = _relative(out / "curves.png", benchmarks_md.parent)
    return "\n".join(
        [
            "## Presets: every `conf/tuned/` preset over seeds 0-9",
            "",
            f"Reproduce: `{COMMAND}` (joblib launcher, 2 jobs at a time), then `python -m benchmarks.scores.presets`,"
            " which writes this section with `rlrun-table` (files in"
            f" `{_relative(out, benchmarks_md.parent)}/`).",
            f"Machine: {facts['machine']}."
            " Wall time of the last invocation of the command (a stopped benchmark continues where it stopped):"
            f" {facts['wall_time']}.",
            "",
            table.strip(),
            "",
            "RL Baselines3 Zoo publishes one trained agent per pair, mean ± std over its evaluation episodes; the same"
            " statistic for our runs pools the final evaluation episodes of every seed:",
            "",
            *facts["zoo"],
            "",
            f"![Learning curves of the preset benchmark: IQM and 95% CI over seeds]({curves})",
        ]
    )


def write_benchmark(sweep: Path, out: Path, benchmarks_md: Path) -> Path:
    """Write the sweep's table and ``section.json`` into ``out`` and its section into ``benchmarks_md``; returns
    ``benchmarks_md``."""
    write_tables([sweep], out)
    facts = run_facts(sweep, out, json.loads((out / "table.json").read_text()))
    write_text(out / "section.json", json.dumps(facts, indent=1, ensure_ascii=False) + "\n")
    return write_kept(out, benchmarks_md)


def write_kept(out: Path, benchmarks_md: Path) -> Path:
    """Rewrite ``out/table.md`` from the kept ``table.json`` (rlrun-table's text as it is now) and the section
    from it and ``section.json``; returns ``benchmarks_md``."""
    if not (out / "table.json").is_file() or not (out / "section.json").is_file():
        raise UserError(
            f"{out}: no kept table.json and section.json",
            "write them from the sweep: python -m benchmarks.scores.presets",
        )
    table = render_markdown(json.loads((out / "table.json").read_text()))
    write_text(out / "table.md", table)
    facts = json.loads((out / "section.json").read_text())
    write_section(benchmarks_md, "presets", section(facts, out, table, benchmarks_md))
    return benchmarks_md


def main() -> None:
    """Parse the options; write from the sweep, or with ``--kept`` from the kept files."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", nargs="?", type=Path, default=Path("outputs/sweeps/presets"))
    parser.add_argument("--kept", action="store_true", help="from the kept files in --out, without the sweep")
    parser.add_argument("--out", type=Path, default=KEPT, help="table files (default: benchmarks/results/presets)")
    parser.add_argument("--benchmarks-md", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args()
    with report_user_errors("python -m benchmarks.scores.presets"):
        if args.kept:
            path = write_kept(args.out, args.benchmarks_md)
        else:
            path = write_benchmark(args.sweep, args.out, args.benchmarks_md)
    print(f"wrote the presets section of {path} and {args.out}/")


if __name__ == "__main__":
    main()
