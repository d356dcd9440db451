"""``python -m benchmarks [--only NAME ...] [--reps N] [--quick]``: run the benchmarks, each rewriting its own
section of BENCHMARKS.md.

Every benchmark is registered here, grouped by the question it answers: ``benchmarks/speed/`` (how fast rlrun
starts, trains, evaluates, sweeps and tracks), ``benchmarks/scores/`` (what the presets score and how soon) and
``benchmarks/zoo/`` (rlrun beside RL Baselines3 Zoo). Some run in this process; the others are their own command
lines (``python -m benchmarks.speed.sweep_scaling ...``), which the runner starts with the arguments their
committed sections were made with. With ``--quick`` every benchmark runs at a tiny size and prints its tables;
nothing in BENCHMARKS.md or ``benchmarks/results/`` is written. The whole suite takes hours on 2 cores: run it in
the background on a quiet machine.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks import common

# The benchmarks that run in this process: name -> the sections they write (name -> Markdown).
Sections = Callable[[argparse.Namespace], dict[str, str]]
# Those that are their own command lines: name -> (module, its arguments for the options and a scratch folder).
Script = tuple[str, Callable[[argparse.Namespace, Path], list[str]]]


def _evaluation(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.speed import evaluation

    return {"evaluation": evaluation.run(args.reps, args.quick)}


def _eval_share(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.speed import eval_share

    return {"eval_share": eval_share.run(args.quick, args.pairs)}


def _overhead(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.speed import overhead

    return {"overhead": overhead.run(args.reps, args.quick)}


def _startup(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.speed import startup

    return {"startup": startup.run(args.reps, args.quick)}


def _time_to_solve(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.scores import time_to_solve

    return {"time_to_solve": time_to_solve.run(args.quick, args.pairs, args.jobs)}


def _zoo(args: argparse.Namespace) -> dict[str, str]:
    from benchmarks.zoo import speed

    return {"zoo": speed.run(args.reps, args.quick, args.pairs, args.user_level)}


def _kept_copy(name: str, scratch: Path) -> Path:
    """A copy of ``benchmarks/results/<name>/`` for a quick run to write into."""
    return Path(shutil.copytree(common.RESULTS / name, scratch / name))


def _presets(args: argparse.Namespace, scratch: Path) -> list[str]:
    if args.quick:
        return ["--kept", "--out", str(_kept_copy("presets", scratch)), "--benchmarks-md", str(scratch / "B.md")]
    sweep = common.ROOT / "outputs" / "sweeps" / "presets"
    return [str(sweep)] if (sweep / "sweep.json").is_file() else ["--kept"]


def _zoo_reproduction(args: argparse.Namespace, scratch: Path) -> list[str]:
    if args.quick:
        return ["--kept", str(_kept_copy("zoo_reproduction", scratch)), "--benchmarks-md", str(scratch / "B.md")]
    return []


def _quick_or(quick: list[str], full: list[str]) -> Callable[[argparse.Namespace, Path], list[str]]:
    return lambda args, _: quick if args.quick else full


IN_PROCESS: dict[str, Sections] = {
    "startup": _startup,
    "overhead": _overhead,
    "evaluation": _evaluation,
    "eval_share": _eval_share,
    "time_to_solve": _time_to_solve,
    "zoo": _zoo,
}
SCRIPTS: dict[str, Script] = {
    "startup_measures": (
        "benchmarks.speed.startup_measures",
        lambda args, _: (
            ["--reps", "1", "--each", "--sweep"]
            if args.quick
            else ["--reps", str(args.reps), "--each", "--sweep", "--write"]
        ),
    ),
    "startup_side_by_side": (
        "benchmarks.speed.startup_side_by_side",
        lambda args, _: [args.other_python, "--rounds", "1" if args.quick else "9"],
    ),
    "preflight": ("benchmarks.speed.preflight", _quick_or(["--reps", "1"], [])),
    "answers": ("benchmarks.speed.answers", _quick_or(["--reps", "1"], ["--write"])),
    "jax_cache": ("benchmarks.speed.jax_cache", _quick_or(["--reps", "1", "--jobs", "2"], ["--write"])),
    "sac_profile": ("benchmarks.speed.sac_profile", _quick_or(["200"], [])),
    "tracking": ("benchmarks.speed.tracking", _quick_or(["--quick"], ["--reps", "3", "--steps", "800000"])),
    "sweep_scaling": (
        "benchmarks.speed.sweep_scaling",
        lambda args, scratch: (
            ["--steps", "2000", "--seeds", "2", "--rounds", "1", "--out", str(scratch / "B.md")]
            if args.quick
            else ["--rounds", "5", "--out", str(args.out)]
        ),
    ),
    "env_throughput": (
        "benchmarks.speed.env_throughput",
        _quick_or(["--steps", "2000", "--reps", "1", "--vec-steps", "5000"], ["--write"]),
    ),
    "fused_adam": ("benchmarks.speed.fused_adam", _quick_or(["--quick"], [])),
    "native_preset": ("benchmarks.scores.native_preset", _quick_or(["--seeds", "1"], ["--write"])),
    "presets": ("benchmarks.scores.presets", _presets),
    "zoo_reproduction": ("benchmarks.zoo.reproduction", _zoo_reproduction),
    "zoo_jax": (
        "benchmarks.zoo.backends",
        _quick_or(["--quick", "--pairs", "cartpole_dqn"], ["--seeds", "10", "--jobs", "2", "--user-level", "--write"]),
    ),
}
# The order they run in: speed, then scores, then the RL Zoo comparison.
NAMES = (
    "startup",
    "startup_measures",
    "startup_side_by_side",
    "overhead",
    "evaluation",
    "eval_share",
    "preflight",
    "answers",
    "jax_cache",
    "sac_profile",
    "tracking",
    "sweep_scaling",
    "env_throughput",
    "fused_adam",
    "presets",
    "time_to_solve",
    "native_preset",
    "zoo",
    "zoo_reproduction",
    "zoo_jax",
)


def run(name: str, args: argparse.Namespace) -> None:
    """Run one benchmark; write its sections unless the run is quick."""
    print(f"== {name}", flush=True)
    if name in SCRIPTS:
        module, arguments = SCRIPTS[name]
        with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as scratch:
            cmd = [common.PYTHON, "-m", module, *arguments(args, Path(scratch))]
            subprocess.run(cmd, cwd=common.ROOT, check=True)
        return
    for section, body in IN_PROCESS[name](args).items():
        if not args.quick:
            common.write_section(section, body, args.out)
        print(body, flush=True)


def main() -> None:
    """Parse the options and run the chosen benchmarks in order."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=NAMES, default=list(NAMES), help="benchmarks to run")
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each side, alternating (default 5)")
    parser.add_argument("--quick", action="store_true", help="tiny budgets, nothing written: proves each works")
    parser.add_argument(
        "--pairs",
        nargs="+",
        help="time_to_solve, eval_share: presets to run (default: the verified ones); zoo: its pairs",
    )
    parser.add_argument("--user-level", action="store_true", help="zoo: also the 10-seed user-level figure")
    parser.add_argument("--jobs", type=int, default=1, help="time_to_solve: runs side by side (default 1)")
    parser.add_argument(
        "--other-python", default=common.PYTHON, help="startup_side_by_side: another rlrun install's python"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=common.BENCHMARKS_MD,
        help="the Markdown file the in-process benchmarks and sweep_scaling write",
    )
    args = parser.parse_args()
    failed = []
    for name in NAMES:
        if name in args.only:
            try:
                run(name, args)
            except (subprocess.CalledProcessError, RuntimeError) as error:  # the others still run
                print(f"{name} FAILED: {error}", flush=True)
                failed.append(name)
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
