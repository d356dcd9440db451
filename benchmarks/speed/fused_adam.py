"""Fused Adam: every verified preset trained with and without ``fused_adam=true``, whole ``rlrun`` processes.

For each verified preset (``conf/tuned/``, not the ones converted from RL Zoo) and seeds 0-4: one run with
``fused_adam=false`` and one with ``fused_adam=true``, ``torch_threads=1``, the preset's own budget. With
``--jobs 2`` (the default) the two sides of one seed run side by side, so both share the machine alike; which
side is started first alternates from seed to seed. Reported per preset: the medians over seeds of wall and CPU
seconds per run, the median of the per-seed ratios fused/plain, the final score (run.json's ``final``, the
metric the preset's target is asserted on, tests/rlrun/run/test_presets.py) of every seed on both sides, and
whether every seed meets the target with fused Adam on. Each run's figures are kept in its folder
(``fused_adam.json``), so a stopped benchmark continues where it stopped and ``--write-only`` writes the section
from the runs that finished::

    nohup python -m benchmarks.speed.fused_adam > /tmp/fused.log 2>&1 &    # about an hour on 2 cores
    python -m benchmarks.speed.fused_adam --quick                          # 2 presets, 300 steps: proves it works
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common import ROOT, Proc, machine, median, provenance, run_process, table, write_section
from benchmarks.verified_presets import PRESETS, SEEDS, TARGETS, split

SECTION = "fused_adam"
OUT = ROOT / "outputs" / "benchmarks" / SECTION
CONFIG = ROOT / "conf" / "config.yaml"
MACHINE = "machine.txt"  # in --out: the machine line as it was when the runs started
SIDES = (False, True)  # plain, fused
QUICK_PRESETS = ("gridworld_ppo", "pendulum_sac")
QUICK_STEPS = 300
COMMAND = "python -m benchmarks.speed.fused_adam"
SHARED = (
    "The machine is shared: other work ran beside the benchmark (it is the same for both sides of a seed, which run"
    " together); CPU seconds are the steadier figure."
)


@dataclass(frozen=True)
class Job:
    """One run: a preset, a seed and a side."""

    preset: str
    seed: int
    fused: bool
    steps: int | None  # None: the preset's budget

    def folder(self, out: Path) -> Path:
        return out / self.preset / ("fused" if self.fused else "plain") / f"seed-{self.seed}"

    def command(self, out: Path) -> list[str]:
        env, algo = split(self.preset)
        cmd = ["rlrun", f"env={env}", f"algo={algo}", f"seed={self.seed}", "torch_threads=1"]
        cmd += [f"fused_adam={str(self.fused).lower()}", "progress_bar=false", "progress_every=0"]
        cmd += [f"hydra.run.dir={self.folder(out)}"]
        return cmd + ([f"total_timesteps={self.steps}"] if self.steps is not None else [])


def jobs_in_order(presets: list[str], seeds: list[int], steps: int | None) -> list[Job]:
    """Preset by preset, seed by seed, the two sides next to each other, the first side alternating."""
    order = []
    for preset in presets:
        for seed in seeds:
            sides = SIDES if seed % 2 == 0 else SIDES[::-1]
            order += [Job(preset, seed, fused, steps) for fused in sides]
    return order


def run_job(job: Job, out: Path) -> dict[str, Any]:
    """Run ``job`` (unless its figures are there already) and return them: wall and CPU seconds, final score."""
    folder = job.folder(out)
    figures = folder / "fused_adam.json"
    if figures.exists():
        return dict(json.loads(figures.read_text()))
    if folder.exists():  # a run stopped with the benchmark: start it over
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
    proc: Proc = run_process(job.command(out), folder.parent / f"{folder.name}.log")
    final = json.loads((folder / "run.json").read_text())["final"]
    result = {"wall_s": proc.wall_s, "cpu_s": proc.cpu_s, "final": final, "command": " ".join(job.command(out))}
    figures.write_text(json.dumps(result, indent=1))
    print(
        f"{job.preset} seed {job.seed} fused={job.fused}: {proc.wall_s:.1f} s wall, {proc.cpu_s:.1f} s CPU", flush=True
    )
    return result


def finished(job: Job, out: Path) -> dict[str, Any] | None:
    """The figures of ``job`` if it finished (in this invocation or an earlier one)."""
    path = job.folder(out) / "fused_adam.json"
    return dict(json.loads(path.read_text())) if path.exists() else None


def _plain_falls_short(preset: str, seeds: list[int], out: Path, steps: int | None) -> bool:
    """Whether a finished run without fused Adam misses the preset's target."""
    metric, threshold = TARGETS[preset]
    runs = [finished(Job(preset, seed, False, steps), out) for seed in seeds]
    return any(_score(run["final"], metric) < threshold for run in runs if run is not None)


def _score(final: dict[str, Any], metric: str) -> float:
    return float(final[metric])


def _fmt(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def preset_row(preset: str, seeds: list[int], out: Path, steps: int | None) -> tuple[list[object], bool | None]:
    """The preset's table row and whether fused Adam meets its target on every seed (None: runs missing)."""
    metric, threshold = TARGETS[preset]
    runs = {fused: [finished(Job(preset, s, fused, steps), out) for s in seeds] for fused in SIDES}
    pairs = [(p, f) for p, f in zip(runs[False], runs[True], strict=True) if p is not None and f is not None]
    if not pairs:
        return [f"`{preset}`", f"{metric} >= {threshold:g}", *["–"] * 8, "not run"], None
    wall = {fused: median([pair[fused]["wall_s"] for pair in pairs]) for fused in SIDES}
    cpu = {fused: median([pair[fused]["cpu_s"] for pair in pairs]) for fused in SIDES}
    wall_ratio = median([f["wall_s"] / p["wall_s"] for p, f in pairs])
    cpu_ratio = median([f["cpu_s"] / p["cpu_s"] for p, f in pairs])
    scores = {fused: [_fmt(_score(r["final"], metric)) if r else "–" for r in runs[fused]] for fused in SIDES}
    fused_scores = [_score(r["final"], metric) for r in runs[True] if r is not None]
    complete = len(fused_scores) == len(seeds)
    meets = sum(score >= threshold for score in fused_scores)
    verdict = f"{meets}/{len(fused_scores)}" + ("" if complete else f" (of {len(seeds)} seeds)")
    row = [
        f"`{preset}`",
        f"{metric} >= {threshold:g}",
        f"{wall[False]:.1f}",
        f"{wall[True]:.1f}",
        f"{wall_ratio:.3f}",
        f"{cpu[False]:.1f}",
        f"{cpu[True]:.1f}",
        f"{cpu_ratio:.3f}",
        " / ".join(scores[False]),
        " / ".join(scores[True]),
        verdict,
    ]
    return row, (meets == len(seeds)) if complete else None


def header(seeds: list[int]) -> tuple[str, ...]:
    """The table's columns."""
    return (
        "preset",
        "target",
        "wall s plain",
        "wall s fused",
        "wall fused/plain",
        "CPU s plain",
        "CPU s fused",
        "CPU fused/plain",
        "final score plain, seeds " + "/".join(map(str, seeds)),
        "final score fused",
        "fused meets target",
    )


def configured_default() -> str:
    """``fused_adam`` as conf/config.yaml sets it: ``auto``, ``true`` or ``false``."""
    return str(yaml.safe_load(CONFIG.read_text())["fused_adam"]).lower()


def _default_follows(default: str) -> str:
    """What the default is, given that every preset met its target with fused Adam."""
    if default == "false":
        return (
            "The default changes only after `pytest -m slow` (50 final episodes) passes with fused Adam and the"
            " presets benchmark is regenerated with it; until then it stays `fused_adam: false`."
        )
    return (
        f"The default is `fused_adam: {default}` (conf/config.yaml), made so after `pytest -m slow` (50 final"
        " episodes) passed with fused Adam; the presets benchmark above is regenerated with it."
    )


def _measured_on(out: Path) -> str | None:
    """The machine line written when the runs in ``out`` started (``--write-only`` writes later, at another load)."""
    kept = out / MACHINE
    return kept.read_text().strip() if kept.exists() else None


def section(presets: list[str], seeds: list[int], out: Path, steps: int | None, command: str) -> str:
    """The body of BENCHMARKS.md's ``fused_adam`` section from the runs that finished."""
    rows, verdicts = [], {}
    for preset in presets:
        row, verdict = preset_row(preset, seeds, out, steps)
        rows.append(row)
        verdicts[preset] = verdict
    missing = [p for p, v in verdicts.items() if v is None]
    short = [p for p, v in verdicts.items() if v is False]
    if short:
        outcome = f"Fused Adam falls short of the target on some seed for {', '.join(f'`{p}`' for p in short)}"
        outcome += ": the default stays `fused_adam: false`."
    elif missing:
        outcome = "Not every preset finished (" + ", ".join(f"`{p}`" for p in missing) + "): the default stays off."
    else:
        outcome = "Every verified preset meets its target on every seed with fused Adam, over each preset's own final"
        outcome += " episodes. " + _default_follows(configured_default())
    if missing and short:
        outcome += " Not finished: " + ", ".join(f"`{p}`" for p in missing) + "."
    plain_short = [p for p in presets if _plain_falls_short(p, seeds, out, steps)]
    if plain_short:
        outcome += " Without fused Adam, some seed falls short for " + ", ".join(f"`{p}`" for p in plain_short) + "."
    ratios = [float(r[4]) for r in rows if r[4] != "–"], [float(r[7]) for r in rows if r[7] != "–"]
    overall = (
        f"Median over presets of the ratio fused/plain: wall {median(ratios[0]):.3f}, CPU {median(ratios[1]):.3f}."
        if ratios[0]
        else ""
    )
    budget = "each preset's own budget" if steps is None else f"{steps} steps per run (a quick check, not figures)"
    return "\n".join(
        [
            "## Fused Adam: `fused_adam=true` against torch's default Adam on every verified preset",
            "",
            f"Whole `rlrun` processes, `torch_threads=1`, {budget}, seeds {seeds[0]}-{seeds[-1]}; the two sides of a"
            " seed run side by side (2 jobs), the side started first alternating. Seconds: medians per run over"
            " seeds; ratios: median of the per-seed ratios. Final score: run.json's `final` metric the preset's"
            " target is asserted on (tests/rlrun/run/test_presets.py).",
            "",
            table(header(seeds), rows),
            "",
            overall,
            outcome,
            "",
            provenance(
                command,
                len(seeds),
                how="one run per seed and side, the sides alternating",
                extra=SHARED,
                measured_on=_measured_on(out),
            ),
        ]
    )


def main() -> None:
    """Run the benchmark (or only write its section) and rewrite the section of BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_PRESETS}, {QUICK_STEPS} steps, seeds 0-1")
    parser.add_argument("--presets", nargs="+", choices=PRESETS, help="default: every verified preset")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (default 2: the two sides of a seed)")
    parser.add_argument("--out", type=Path, default=OUT, help="run folders (kept: a re-run continues)")
    parser.add_argument("--benchmarks-md", type=Path, default=None, help="default BENCHMARKS.md; quick: none")
    parser.add_argument("--write-only", action="store_true", help="write the section from the runs that finished")
    args = parser.parse_args()
    presets = list(args.presets or (QUICK_PRESETS if args.quick else PRESETS))
    seeds = [0, 1] if args.quick else list(SEEDS)
    steps = QUICK_STEPS if args.quick else None
    out = args.out / "quick" if args.quick else args.out
    if not args.write_only:
        out.mkdir(parents=True, exist_ok=True)
        (out / MACHINE).write_text(machine() + "\n")
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for result in pool.map(lambda job: run_job(job, out), jobs_in_order(presets, seeds, steps)):
                del result  # raised errors surface here, in order
    command = " ".join(
        [COMMAND, *(["--quick"] if args.quick else []), *(["--presets", *presets] if args.presets else [])]
    )
    body = section(presets, seeds, out, steps, command)
    print(body, flush=True)
    target = args.benchmarks_md or (None if args.quick else ROOT / "BENCHMARKS.md")
    if target is not None:
        write_section(SECTION, body, target)
        print(f"wrote the {SECTION} section of {target}")


if __name__ == "__main__":
    main()
