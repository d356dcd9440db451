"""What rlrun's start-up measures buy (``rlrun.startup.bootstrap.MEASURES``): a tiny ``python -m rlrun`` run timed
to its end with the measures on and with ``RLRUN_FAST_START=0``, and a two-seed joblib sweep with and without the
fork server's preloads.

``python -m benchmarks.speed.startup_measures [--reps 5] [--each] [--sweep] [--write]`` runs each variant
``--reps`` times, alternating (on, off, on, off, ...) so that machine noise hits them alike, after a round that is
not counted, and prints the medians of wall and CPU seconds (user + system, children included: the steadier figure
on a shared machine), what each variant costs against the measures on, round by round, and the spread of the "on"
repetitions (max - min), the noise to weigh a cost against. ``--each`` adds one variant per measure of a single run
turned off alone (``gc_pause``; the private ``_RLRUN_FAST_START_SKIP``), ``--sweep`` a two-seed joblib sweep with
every measure on, without the fork server's preloads (``preload``) and with ``RLRUN_FAST_START=0``. A sweep's CPU
seconds count only the processes its own process waits for (not the fork server's workers): compare sweeps by wall
time. ``--write`` puts the tables into BENCHMARKS.md (section ``startup_measures``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks import common

TINY = common.TINY_RUN  # a whole run of about a second (the tests' tiny run)
SWEEP = ["-m", "env=gridworld", "algo=ppo", "seed=0,1", "total_timesteps=2048", "progress_bar=false"]
SWEEP += ["hydra/launcher=joblib"]
SWITCH, SKIP = "RLRUN_FAST_START", "_RLRUN_FAST_START_SKIP"

# name: (environment variables, what the variant is)
RUNS: dict[str, tuple[dict[str, str], str]] = {
    "on": ({}, "every measure on (the default)"),
    "off": ({SWITCH: "0"}, "RLRUN_FAST_START=0"),
}
SINGLE = ("gc_pause",)  # the measures that act in a single run; "preload" acts only in a joblib sweep
EACH = {f"no {name}": ({SKIP: name}, f"all but {name}") for name in SINGLE}
SWEEPS = {
    "sweep on": ({}, "2-seed joblib sweep, every measure on"),
    "sweep no preload": ({SKIP: "preload"}, "the same without the fork server's preloads"),
    "sweep off": ({SWITCH: "0"}, "the same with RLRUN_FAST_START=0"),
}


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (SWITCH, SKIP)}
    return {**env, **extra}


def measure(variants: dict[str, tuple[dict[str, str], str]], reps: int, work: Path) -> dict[str, list[common.Proc]]:
    """Each variant ``reps`` times, alternating, after one round that is not counted (the first run of a
    command reads its files from disk); every run in a fresh folder."""
    results: dict[str, list[common.Proc]] = {name: [] for name in variants}
    for rep in range(-1, reps):
        for name, (extra, _) in variants.items():
            folder = work / f"{name.replace(' ', '_')}-{rep + 1}"
            folder.mkdir(parents=True)
            tiny = [*TINY, f"hydra.run.dir={folder / 'run'}"]
            args = [*SWEEP, f"sweep=s{rep + 1}"] if name in SWEEPS else tiny
            proc = common.run_process(
                [common.PYTHON, "-m", "rlrun", *args], folder / "log.txt", cwd=folder, env=_environment(extra)
            )
            if rep >= 0:
                results[name].append(proc)
            label = f"rep {rep}" if rep >= 0 else "warm-up"
            print(f"  {name:>19} {label}: wall {proc.wall_s:5.2f} s, CPU {proc.cpu_s:5.2f} s", file=sys.stderr)
    return results


def report(results: dict[str, list[common.Proc]], variants: dict[str, tuple[dict[str, str], str]], base: str) -> str:
    """A Markdown table: medians, and what each variant costs against ``base`` round by round (the median of
    the rounds' differences, and in how many rounds it cost more): a cost that is not there in (nearly) every
    round, or that is smaller than ``base``'s own spread, is within noise."""
    lines = [
        "| variant | what | wall s | CPU s | peak MB | costs: wall s | CPU s | rounds it cost more (CPU) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        wall = [p.wall_s - b.wall_s for p, b in zip(runs, results[base], strict=True)]
        cpu = [p.cpu_s - b.cpu_s for p, b in zip(runs, results[base], strict=True)]
        lines.append(
            f"| {name} | {variants[name][1]} | {common.median([p.wall_s for p in runs]):.2f} | "
            f"{common.median([p.cpu_s for p in runs]):.2f} | {common.median([p.peak_mb for p in runs]):.0f} | "
            f"{common.median(wall):+.2f} | {common.median(cpu):+.2f} | {sum(d > 0 for d in cpu)} of {len(cpu)} |"
        )
    walls, cpus = [p.wall_s for p in results[base]], [p.cpu_s for p in results[base]]
    lines.append(
        f"\nMedians over the rounds. Noise: the {len(walls)} `{base}` runs spread over {max(walls) - min(walls):.2f} s"
        f" wall and {max(cpus) - min(cpus):.2f} s CPU (max - min)."
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, run the variants, print the tables; ``--write``: also into BENCHMARKS.md."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed.startup_measures", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each variant (default: 5)")
    parser.add_argument("--each", action="store_true", help="also each measure turned off alone")
    parser.add_argument("--sweep", action="store_true", help="also a joblib sweep, with and without the preloads")
    parser.add_argument("--write", action="store_true", help="write the tables into BENCHMARKS.md")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.speed.startup_measures " + " ".join(
        [*(["--each"] if args.each else []), *(["--sweep"] if args.sweep else []), f"--reps {args.reps}"]
    )
    lines = [f"Machine: {common.machine()}", f"Versions: {common.versions()}", ""]
    with tempfile.TemporaryDirectory(prefix="rlrun-startup-") as tmp:
        variants = {**RUNS, **(EACH if args.each else {})}
        runs = measure(variants, args.reps, Path(tmp) / "runs")
        lines += [f"A tiny `python -m rlrun {' '.join(TINY)}` run, to its end, {args.reps} alternated repetitions:"]
        lines += ["", report(runs, variants, "on")]
        if args.sweep:
            sweeps = measure(SWEEPS, args.reps, Path(tmp) / "sweeps")
            lines += ["", f"`python -m rlrun {' '.join(SWEEP)}`, to its end, {args.reps} alternated repetitions:"]
            lines += ["", report(sweeps, SWEEPS, "sweep on")]
    lines += ["", f"Load at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}"]
    text = "\n".join(lines)
    print(text)
    if args.write:
        common.write_section("startup_measures", section(command, text))


def section(command: str, text: str) -> str:
    """The ``startup_measures`` section of BENCHMARKS.md: what the measures are, then the tables."""
    return "\n".join(
        [
            "### What each start-up measure buys",
            "",
            "The start-up measures (`rlrun/startup/`, chosen by `rlrun/startup/bootstrap.py`, public APIs only) are"
            " kept only where they buy time: each turned off alone costs more in every round, by more than the"
            " spread of the runs with all of them on. `gc_pause`: no garbage collections while `rlrun` starts"
            " (resumed when training starts); `preload`: the joblib fork server imports what a job needs once, with"
            " collections paused, and freezes it before it forks the workers. `RLRUN_FAST_START=0` turns all of them"
            f" off. Output of `{command}`:",
            "",
            "```",
            text,
            "```",
        ]
    )


if __name__ == "__main__":
    main()
