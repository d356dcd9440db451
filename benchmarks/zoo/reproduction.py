"""RL Zoo's pairs over seeds 0-9 (``+benchmark=zoo``): keep each part's results, then write BENCHMARKS.md's
``zoo_reproduction`` section (nothing else) from the parts kept.

The benchmark runs in parts, each its own sweep (``conf/benchmark/zoo.yaml``). A session's ``outputs/`` may not
last, so each part's results are kept in the repository as the part ends: ``keep`` copies the files that
``rlrun-table`` reads and that describe the runs (``sweep.json``; per run ``run.json``, ``config.yaml``,
``eval.csv``; not models, snapshots, TensorBoard files or logs) into
``benchmarks/results/zoo_reproduction/zoo-<part>/`` and checks that the copy gives the same ``table.md``, byte for
byte, as the sweep. Without arguments the script runs ``rlrun-table --aggregate`` on every kept part into
``benchmarks/results/zoo_reproduction/`` and writes the section: per pair our seeds beside RL Zoo's published
figure (``conf/benchmark/references.yaml``), whether that figure lies inside our interval and, where not, what
differs; then the aggregate across envs::

    rlrun -m +benchmark=zoo benchmark.part=1                                   # then 2 and 3
    python -m benchmarks.zoo.reproduction keep outputs/sweeps/zoo-1  # commit benchmarks/results/zoo_reproduction/
    python -m benchmarks.zoo.reproduction
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common import RESULTS, ROOT, cpu, versions, wall_time
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.keys import ABSENT
from rlrun.record.formats import write_text
from rlrun.table.aggregate import SHIPPED, shipped_references
from rlrun.table.outputs import write_section
from rlrun.table.runs import Run, find_runs, read_run
from rlrun.table.write import write_tables

KEPT = RESULTS / "zoo_reproduction"
CONFIG = ROOT / "conf" / "benchmark" / "zoo.yaml"
RUN_FILES = ("run.json", "config.yaml", "eval.csv", "run-manifest.json")  # what rlrun-table reads of a run folder
NAME = "zoo_reproduction"
BEFORE = "<!-- rlrun:begin startup -->"  # a new section goes before this section
PAIR = "+benchmark/zoo_pair="
# Env families whose evaluation the Zoo runs with sampled actions (rl_zoo3's enjoy.py: Atari and MiniGrid), by
# the env config's `extra`; the Zoo evaluates every other env with the deterministic policy.
ZOO_SAMPLES = ("atari", "minigrid")


def keep(sweep: Path, into: Path = KEPT) -> Path:
    """Copy a finished part's small files into ``into/<sweep name>/`` (replacing an earlier copy); raises
    UserError for a folder without ``sweep.json`` or a copy whose table differs from the sweep's."""
    try:
        name = json.loads((sweep / "sweep.json").read_text())["sweep"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{sweep}: no readable sweep.json with its 'sweep' name ({error})",
            "give a sweep folder whose sweep has ended, e.g. outputs/sweeps/zoo-1 (sweep.json is written at its end)",
        ) from None
    into.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=into))
    try:
        shutil.copy2(sweep / "sweep.json", staging / "sweep.json")
        for run in find_runs([sweep]):
            target = staging / run.folder.relative_to(sweep)
            target.mkdir(parents=True)
            for file in RUN_FILES:
                if (run.folder / file).is_file():
                    shutil.copy2(run.folder / file, target / file)
        with tempfile.TemporaryDirectory() as scratch:  # the copy must give the sweep's table, byte for byte
            a, b = (
                write_tables([folder], Path(scratch) / side).read_bytes()
                for folder, side in [(sweep, "a"), (staging, "b")]
            )
        if a != b:
            raise UserError(f"the copy of {sweep} gives another table.md than the sweep", "report this as a bug")
        shutil.rmtree(into / name, ignore_errors=True)
        staging.rename(into / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return into / name


def parts(config: Path = CONFIG) -> dict[str, list[str]]:
    """The benchmark's parts and their pairs, as ``conf/benchmark/zoo.yaml`` lists them (``all`` left out)."""
    listed = yaml.safe_load(config.read_text())["benchmark"]["parts"]
    return {str(part): str(pairs).split(",") for part, pairs in listed.items() if part != "all"}


def _budget(text: Any) -> int:
    """A Zoo budget as references.yaml writes it (``500k``, ``1M``) in steps."""
    number, unit = re.fullmatch(r"([\d.]+)([kM]?)", str(text)).groups()  # type: ignore[union-attr]
    return round(float(number) * {"": 1, "k": 1_000, "M": 1_000_000}[unit])


def zoo_version(references: Path) -> str:
    """The Zoo release and commit the figures come from, as references.yaml's header says."""
    found = re.search(r"rl-baselines3-zoo (\d[\w.]*)", references.read_text())
    return f"Zoo {found.group(1)}" if found else "Zoo version unknown"


def zoo_note(references: Path) -> str:
    """references.yaml's header paragraph on the Zoo's figures (``# Zoo figures: ...`` to the next paragraph)."""
    lines = [line[2:] for line in references.read_text().splitlines() if line.startswith("# ")]
    start = next((i for i, line in enumerate(lines) if line.startswith("Zoo figures:")), len(lines))
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"[A-Z]\w*:", lines[i])), len(lines))
    return " ".join(lines[start:end])


def _score(value: float | None, digits: int | None = None) -> str:
    """A score for reading, as rlrun-table writes them: one decimal from 100 up, else two; ``–`` for none."""
    if value is None:
        return "–"
    return f"{value:.{(1 if abs(value) >= 100 else 2) if digits is None else digits}f}"


def _spread(mean: float | None, std: float | None) -> str:
    """``mean ± std``, the std to the mean's decimals."""
    return "–" if mean is None else f"{_score(mean)} ± {_score(std, 1 if abs(mean) >= 100 else 2)}"


def differences(run: Run, env_id: str, total: int, entry: dict[str, Any], figure: dict[str, Any]) -> list[str]:
    """What sets our runs apart from the Zoo's figure, from the configs and references.yaml: budget, env id,
    evaluation policy."""
    found = []
    if _budget(figure["timesteps"]) != total:
        found.append(f"budget: ours {total:,} steps, the Zoo's {_budget(figure['timesteps']):,}")
    bare = env_id.rpartition(":")[2]
    if entry.get("zoo") and entry["zoo"] != bare:
        found.append(f"env version: we run {bare}, the Zoo's figure is for {entry['zoo']}")
    ours, family = run.value("eval.deterministic"), run.value("env.extra")
    zoo_deterministic = family not in ZOO_SAMPLES
    if ours is not ABSENT and bool(ours) != zoo_deterministic:
        policy = {True: "the deterministic policy", False: "sampled actions"}
        found.append(f"evaluation: we evaluate with {policy[bool(ours)]}, the Zoo with {policy[zoo_deterministic]}")
    return found


def pair_rows(out: Path, references: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per pair (``+benchmark/zoo_pair=``), its table rows with the Zoo's figure, the verdict and the differences."""
    table = json.loads((out / "table.json").read_text())
    found: dict[str, list[dict[str, Any]]] = {}
    for row, group in zip(table["rows"], table["groups"], strict=True):
        run = read_run(out / group["runs"][0]["folder"])
        pair = next((o[len(PAIR) :] for o in run.record["overrides"] if o.startswith(PAIR)), row["group"])
        entry = references.get(group["env_id"]) or references.get(group["env_id"].rpartition(":")[2]) or {}
        algos, target = entry.get("algos") or {}, str(run.value("algo._target_")).rsplit(".", 1)[-1].lower()
        figure = algos.get(row["algo"]) or algos.get(target)  # her_tqc: the Zoo's TQC figure (HER is its buffer)
        low, high = row["return_iqm_low"], row["return_iqm_high"]
        inside = None if figure is None or low is None else low <= figure["mean"] <= high
        notes = differences(run, group["env_id"], group["total_timesteps"], entry, figure) if figure else []
        episodes = (run.record.get("final") or {}).get("episodes")
        extra = {"total_timesteps": group["total_timesteps"], "episodes": episodes, "figure": figure}
        extra |= {"inside": inside, "notes": notes}
        found.setdefault(pair, []).append(row | extra)
    return found


def _cells(pair: str, part: str, row: dict[str, Any], version: str) -> list[str]:
    """One pair's row of the section's table."""
    mean = _spread(row["return_mean"], row["return_std"])
    iqm = _score(row["return_iqm"])
    if row["return_iqm_low"] is not None:
        iqm += f" [{_score(row['return_iqm_low'])}, {_score(row['return_iqm_high'])}]"
    reached = "–"
    if row["reached"] is not None:
        steps = "–" if row["steps_to_threshold"] is None else f"{row['steps_to_threshold']:,.0f}"
        reached = f"{steps} ({row['reached']}/{row['seeds_completed']})"
    figure, zoo = row["figure"], "none published"
    if figure is not None:
        zoo = f"{_spread(figure['mean'], figure['std'])}, {_budget(figure['timesteps']):,} steps ({version})"
    verdict = {None: "–", True: "inside", False: "**outside**"}[row["inside"]]
    head = [
        f"`{pair}` (part {part})",
        f"{row['total_timesteps']:,}",
        f"{row['seeds_completed']}/{row['seeds_planned']}",
    ]
    return head + [iqm, mean, reached, _score(row["wall_s"], 1), _score(row["fps"], 0), zoo, verdict]


HEADER = (
    "pair (part) | steps | seeds | rlrun return IQM [95% CI] | rlrun mean ± std over seeds | steps to threshold"
    " (reached) | wall s / seed | steps/s | RL Zoo: 1 agent, mean ± std, budget | Zoo inside our CI"
)


def _why(row: dict[str, Any]) -> str:
    """What differs between a pair's runs and the Zoo's figure: the configs' differences, then what always does."""
    each = f" ({row['episodes']} episodes each)" if row["episodes"] else ""
    seeds = (
        f"the Zoo's figure is one agent's evaluation, ours the IQM of {row['seeds_completed']} seeds' final ones{each}"
    )
    return "; ".join(row["notes"] or ["same budget, env id and evaluation policy"]) + f"; {seeds}."


def comparison(
    rows: dict[str, list[dict[str, Any]]], present: dict[str, Path], listed: dict[str, list[str]], references: Path
) -> list[str]:
    """The per-pair table and the notes under it: what differs where the Zoo's figure lies outside."""
    version = zoo_version(references)
    lines = [f"| {HEADER} |", "|" + "---|" * (HEADER.count("|") + 1)]
    notes, absent = [], []
    for part, pairs in listed.items():
        for pair in pairs:
            if part in present and pair not in rows:
                absent.append(f"`{pair}`")
            for row in rows.get(pair, []) if part in present else []:
                lines.append("| " + " | ".join(_cells(pair, part, row, version)) + " |")
                if row["inside"] is False:
                    notes.append(f"- `{pair}`: {_why(row)}")
    if absent:
        lines += ["", f"No runs in the kept parts for {', '.join(absent)}."]
    if notes:
        lines += [
            "",
            f"Where the Zoo's figure lies outside our interval, what differs (from the configs and `{SHIPPED}`):",
            "",
            *notes,
        ]
    return lines


def part_lines(present: dict[str, Path], listed: dict[str, list[str]]) -> list[str]:
    """One line per part: its jobs and wall time from its sweep.json, or that it is missing."""
    lines = []
    for part, pairs in listed.items():
        head = f"- part {part} ({', '.join(pairs)}):"
        if part not in present:
            lines.append(f"{head} **missing** (not run or not kept yet).")
            continue
        record = json.loads((present[part] / "sweep.json").read_text())
        counts = record.get("counts") or {}
        last = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in counts.items() if n and state != "planned")
        done = [run for run in find_runs([present[part]]) if run.completed]
        busy = sum(run.record.get("wall_s") or 0.0 for run in done)
        lines.append(
            f"{head} {len(done)} of {counts.get('planned', '?')} runs completed, their wall times (run.json) adding up"
            f" to {busy / 3600:.2f} h; its last invocation: {last or 'no jobs counted'}, wall time"
            f" {wall_time(present[part])}."
        )
    return lines


def how_to_read(table: dict[str, Any], rows: dict[str, list[dict[str, Any]]], references: Path) -> str:
    """The paragraph under the table: what each figure is, the thresholds, and where the Zoo's figures come from."""
    episodes = " or ".join(
        sorted({str(row["episodes"]) for found in rows.values() for row in found if row["episodes"]})
    )
    targets = [(g["env_id"].rpartition(":")[2], g["threshold"]) for g in table["groups"] if g["threshold"]]
    thresholds = "; ".join(sorted({f"{env}: {t['metric'].replace('_', ' ')} ≥ {t['value']:g}" for env, t in targets}))
    return (
        f"How to read it. Ours: each seed's final evaluation ({episodes} episodes, run.json's `final`); IQM over the"
        " seeds (rliable's interquartile mean, `scipy.stats.trim_mean(scores, 0.25)`: 25% of the seeds trimmed from"
        " each end, so 6 of 10 count) with its 95% bootstrap interval, mean ± std over the seeds' scores; steps to"
        " threshold: the first"
        f" periodic evaluation that reached it, median over the seeds that did ({thresholds or 'none known'});"
        " wall time and steps/s: median per seed (run.json). The Zoo: one trained agent, mean ± std over its"
        ' evaluation episodes, so its std is across episodes and ours across seeds. "inside": the Zoo\'s mean lies'
        f" in our IQM's interval. Quoted from `{SHIPPED}`: {zoo_note(references)}"
    )


def section(out: Path, present: dict[str, Path], listed: dict[str, list[str]], references: Path, md: Path) -> str:
    """The body of BENCHMARKS.md's ``zoo_reproduction`` section (links relative to ``md``)."""
    table = json.loads((out / "table.json").read_text())
    link = Path(os.path.relpath(out.resolve(), md.parent.resolve())).as_posix()
    rows = pair_rows(out, yaml.safe_load(references.read_text()))
    runs = table["provenance"]["runs"]
    packages = ", ".join(f"{name} {' / '.join(found)}" for name, found in runs["versions"].items())
    commands = " ".join(f"`rlrun -m +benchmark=zoo benchmark.part={part}`;" for part in listed)
    return "\n".join(
        [
            "## RL Zoo's pairs over seeds 0-9, beside the Zoo's published figures",
            "",
            f"Reproduce, part by part (each its own sweep, `outputs/sweeps/zoo-<part>/`, 2 jobs at a time): {commands}"
            " after each, `python -m benchmarks.zoo.reproduction keep outputs/sweeps/zoo-<part>` (its run records"
            f" into `{link}/zoo-<part>/`, to commit); then `python -m benchmarks.zoo.reproduction`, which writes this"
            f" section with `rlrun-table --aggregate` (files in `{link}/`). The Zoo's hyperparameters and budgets"
            " (`conf/benchmark/zoo_pair/`), evaluations every tenth of the budget.",
            "",
            *part_lines(present, listed),
            "",
            *comparison(rows, present, listed, references),
            "",
            how_to_read(table, rows, references),
            "",
            f"![Learning curves: IQM and 95% CI over seeds]({link}/curves.png)",
            "",
            "### Across envs (rliable's aggregate)",
            "",
            "Each run's final return normalised per env: a random policy = 0 (uniform random actions, its score in the"
            " `random` column), the Zoo's figure for the pair = 1 (`reference`).",
            "",
            (out / "aggregate.md").read_text().strip(),
            "",
            f"![Performance profiles]({link}/profiles.png) ![Aggregate estimates with 95% CIs]({link}/aggregate.png)",
            "",
            f"Runs' hosts: {', '.join(runs['hosts']) or 'unknown'}; section written on {cpu()},"
            f" {platform.system()} {platform.release()}."
            f" Runs: {packages or 'versions unknown'}; git {', '.join(c[:12] for c in runs['git']) or 'unknown'}."
            f" Section written with {versions()}, Python {platform.python_version()}.",
        ]
    )


def _place(md: Path) -> None:
    """A new section goes before the startup section (after the zoo section and its commentary)."""
    text = md.read_text(encoding="utf-8") if md.exists() else ""
    if f"<!-- rlrun:begin {NAME} -->" not in text and BEFORE in text:
        empty = f"<!-- rlrun:begin {NAME} -->\n<!-- rlrun:end {NAME} -->\n\n"
        write_text(md, text.replace(BEFORE, empty + BEFORE, 1))


def write_reproduction(kept: Path = KEPT, md: Path = ROOT / "BENCHMARKS.md", config: Path = CONFIG) -> Path:
    """Tables and aggregate of every kept part into ``kept``, and the section into ``md``; returns ``md``."""
    listed = parts(config)
    present = {part: kept / f"zoo-{part}" for part in listed if (kept / f"zoo-{part}" / "sweep.json").is_file()}
    if not present:
        raise UserError(
            f"{kept}: no kept part (zoo-{'|'.join(listed)}/sweep.json)",
            "keep a finished part first: python -m benchmarks.zoo.reproduction keep outputs/sweeps/zoo-1",
        )
    references = shipped_references()
    write_tables(list(present.values()), kept, aggregate=True)
    _place(md)
    write_section(md, NAME, section(kept, present, listed, references, md))
    return md


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("keep", nargs="?", choices=["keep"], help="keep a part's results instead of writing")
    parser.add_argument("sweep", nargs="?", type=Path, help="with keep: the part's sweep folder")
    parser.add_argument("--kept", type=Path, default=KEPT, help="where the parts are kept and the tables written")
    parser.add_argument("--benchmarks-md", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args()
    with report_user_errors("python -m benchmarks.zoo.reproduction"):
        if args.keep:
            if args.sweep is None:
                parser.error("keep needs the part's sweep folder, e.g. keep outputs/sweeps/zoo-1")
            kept = keep(args.sweep, args.kept)
            planned = (json.loads((kept / "sweep.json").read_text()).get("counts") or {}).get("planned", "?")
            done = f"{sum(run.completed for run in find_runs([kept]))} of {planned} runs completed"
            print(f"kept {args.sweep} in {kept}/ ({done}; the same table.md as the sweep's)")
        else:
            print(f"wrote the {NAME} section of {write_reproduction(args.kept, args.benchmarks_md)} and {args.kept}/")


if __name__ == "__main__":
    main()
