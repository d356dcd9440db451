"""``python -m benchmarks [--only NAME ...] [--reps N] [--quick]``: run the suite, each benchmark rewriting its
own section of BENCHMARKS.md.

The sweep-scaling and env-throughput benchmarks are their own scripts (benchmarks/sweep_scaling.py,
benchmarks/env_throughput.py); the suite runs them when they are there. The whole suite takes hours on
2 cores: run it in the background on a quiet machine.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from benchmarks import common

NAMES = ("evaluation", "overhead", "zoo", "startup", "time_to_solve", "sweep_scaling", "env_throughput")
SCRIPTS = {
    "sweep_scaling": (["--out", str(common.BENCHMARKS_MD)], ["--steps", "2000", "--seeds", "2", "--rounds", "1"]),
    "env_throughput": (["--write"], ["--steps", "2000", "--reps", "1", "--vec-steps", "5000"]),
}


def _script(name: str, quick: bool) -> None:
    """Another helper's benchmark script; a quick run prints its tables and leaves its section alone."""
    path = common.ROOT / "benchmarks" / f"{name}.py"
    if not path.exists():
        print(f"{name}: {path} is not there; skipped")
        return
    full, small = SCRIPTS[name]
    if quick and name == "sweep_scaling":
        small = [*small, "--out", str(Path(tempfile.mkdtemp()) / "BENCHMARKS.md")]
    subprocess.run([common.PYTHON, str(path), *(small if quick else full)], cwd=common.ROOT, check=True)


def main() -> None:
    """Parse the options and run the chosen benchmarks in order."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=NAMES, default=list(NAMES), help="benchmarks to run")
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each side, alternating (default 5)")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: proves each benchmark works")
    parser.add_argument(
        "--pairs", nargs="+", help="time_to_solve: presets to run (default: all of conf/tuned/); zoo: its pairs"
    )
    parser.add_argument("--user-level", action="store_true", help="zoo: also the 10-seed user-level figure")
    parser.add_argument("--jobs", type=int, default=1, help="time_to_solve: runs side by side (default 1)")
    parser.add_argument("--out", type=Path, default=common.BENCHMARKS_MD, help="the Markdown file to write")
    args = parser.parse_args()
    only = set(args.only)
    for name in NAMES:
        if name not in only:
            continue
        print(f"== {name}", flush=True)
        if name in SCRIPTS:
            _script(name, args.quick)
            continue
        sections = _run(name, args, only)
        for section, body in sections.items():
            common.write_section(section, body, args.out)
            print(body, flush=True)


def _run(name: str, args: argparse.Namespace, only: set[str]) -> dict[str, str]:
    if name == "evaluation":
        from benchmarks import evaluation

        return {"evaluation": evaluation.run(args.reps, args.quick)}
    if name == "overhead":
        from benchmarks import overhead

        return {"overhead": overhead.run(args.reps, args.quick)}
    if name == "time_to_solve":
        from benchmarks import time_to_solve

        return {"time_to_solve": time_to_solve.run(args.quick, args.pairs, args.jobs)}
    from benchmarks import zoo

    if name == "startup" and "zoo" in only:
        return {}  # written together with the zoo section
    return zoo.run(args.reps, args.quick, only & {"zoo", "startup"}, args.pairs, args.user_level)


if __name__ == "__main__":
    main()
