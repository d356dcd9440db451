"""What JAX's compilation cache saves a jax sweep: CPU seconds of a 4-job ``algo.backend=jax`` sweep with the cache
cold (an empty folder) and warm (the folder the cold sweep filled), the two alternating.

Each sweep is CartPole DQN on SBX with a tiny budget, four seeds on the joblib launcher (two jobs at a time), so its
cost is mostly what every jax process pays: JAX's import and XLA's compilation of SBX's functions. The sweeps run
with ``RLRUN_FAST_START=0``: joblib's workers are then the sweep's own children, and ``wait4`` counts their CPU
seconds with the sweep's (the fork server's workers are not its children). Goal: the warm sweep spends less.

    python -m benchmarks.speed.jax_cache [--reps 3] [--jobs 4] [--write]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from benchmarks.common import PYTHON, median, provenance, run_process, table, write_section

SECTION = "jax_cache"
SWEEP = ["env=cartpole", "algo=dqn", "algo.backend=jax", "~tuned", "total_timesteps=400", "algo.learning_starts=100"]
SWEEP += ["eval.every=200", "eval.episodes=2", "eval.final_episodes=2", "hydra/launcher=joblib"]
SWEEP += ["hydra.launcher.n_jobs=2"]


def sweep(work: Path, name: str, cache: Path, jobs: int) -> tuple[float, float]:
    """(CPU, wall) seconds of one sweep of ``jobs`` seeds with the compilation cache in ``cache``."""
    env = {**os.environ, "RLRUN_JAX_CACHE": str(cache), "RLRUN_FAST_START": "0"}
    cmd = [PYTHON, "-m", "rlrun", "-m", *SWEEP, f"seed=range({jobs})", f"hydra.sweep.dir={work / 'sweeps' / name}"]
    proc = run_process(cmd, work / "logs" / f"{name}.log", cwd=work, env=env)
    return proc.cpu_s, proc.wall_s


def measure(reps: int, jobs: int, work: Path) -> dict[str, list[tuple[float, float]]]:
    """(CPU, wall) of each side, ``reps`` times: a cold sweep into a new cache folder, then a warm one from it."""
    times: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    for rep in range(reps):
        cache = work / f"cache-{rep}"
        times["cold"].append(sweep(work, f"cold-{rep}", cache, jobs))
        times["warm"].append(sweep(work, f"warm-{rep}", cache, jobs))
    return times


def section(times: dict[str, list[tuple[float, float]]], reps: int, jobs: int) -> str:
    cpu = {side: median([c for c, _ in values]) for side, values in times.items()}
    wall = {side: median([w for _, w in values]) for side, values in times.items()}
    rows = [[side, f"{cpu[side]:.1f}", f"{wall[side]:.1f}"] for side in ("cold", "warm")]
    ratio = cpu["warm"] / cpu["cold"]
    verdict = "met" if ratio < 1 else "not met"
    lines = [
        f"A {jobs}-job `algo.backend=jax` sweep (CartPole DQN on SBX, tiny budget, joblib with 2 jobs at a time), "
        "CPU seconds of the whole sweep, its workers included, with JAX's compilation cache cold and warm:",
        "",
        table(["cache", "CPU s", "wall s"], rows),
        "",
        f"Warm / cold: {ratio:.2f} of the CPU seconds (goal: below 1, {verdict}); "
        f"{(cpu['cold'] - cpu['warm']) / jobs:.1f} CPU-s saved per job. A process compiles each function once "
        "either way, and joblib's workers run several jobs each: the cache saves each worker's first compilations "
        "(and a resume's, a new process), not one per job.",
        "",
        provenance(f"python -m benchmarks.speed.jax_cache --reps {reps} --jobs {jobs} --write", reps),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.jax_cache", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="cold and warm sweeps, alternating (default 3)")
    parser.add_argument("--jobs", type=int, default=4, help="seeds of each sweep (default 4)")
    parser.add_argument("--write", action="store_true", help="rewrite BENCHMARKS.md's jax_cache section")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlrun-jax-cache-") as scratch:
        body = section(measure(args.reps, args.jobs, Path(scratch)), args.reps, args.jobs)
    print(body)
    if args.write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
