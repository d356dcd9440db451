"""``algo.backend=jax`` (SBX) against the torch backend (SB3), whole ``python -m rlrun`` processes at one thread.

Each pair trains at its preset's hyperparameters on both backends, sides alternating (torch first on even
repetitions, jax first on odd ones), one torch and XLA thread each (``torch_threads=1``). Per side: the median wall
and CPU seconds of the whole process (JAX's import and compilation included), its peak memory, and the final
returns; then jax / torch for wall and CPU time. The torch side is rlrun on SB3, which BENCHMARKS.md's ``zoo``
section shows at 0.89-1.08 of RL Zoo's wall time at equal threads, so the ratio stands for jax against the Zoo.

    python -m benchmarks.zoo.backends [--pairs pendulum-sac cartpole-dqn] [--steps 20000] [--reps 1] [--seeds 1]
        [--write]   # also write the zoo_jax section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from benchmarks.common import PYTHON, median, run_process, table, versions, write_section

# name -> (env config, algo config, the preset's budget)
PAIRS = {
    "pendulum-sac": ("pendulum", "sac", 20_000),
    "pendulum-tqc": ("pendulum", "tqc", 20_000),
    "cartpole-dqn": ("cartpole", "dqn", 50_000),
}
SIDES = ("torch", "jax")
PACKAGES = ("stable-baselines3", "sbx-rl", "jax", "flax", "torch", "gymnasium")
MEMORY_BUDGET_GB = 24  # how many parallel jobs of each side fit in this machine's memory


def run_side(work: Path, pair: str, side: str, steps: int, seed: int, rep: int) -> dict[str, float]:
    """One whole run of ``pair`` on ``side``: wall and CPU seconds, peak MB and the final mean return."""
    env, algo, _ = PAIRS[pair]
    run_dir = work / f"{pair}-{side}-seed{seed}-rep{rep}"
    command = [PYTHON, "-m", "rlrun", f"env={env}", f"algo={algo}", f"algo.backend={side}", "torch_threads=1"]
    command += [f"seed={seed}", f"total_timesteps={steps}", "progress_bar=false", f"hydra.run.dir={run_dir}"]
    proc = run_process(command, work / "logs" / f"{run_dir.name}.log", cwd=work)
    final = json.loads((run_dir / "run.json").read_text())["final"]
    return {"wall": proc.wall_s, "cpu": proc.cpu_s, "peak_mb": proc.peak_mb, "return": final["mean_return"]}


def measure(pair: str, steps: int, reps: int, seeds: int, work: Path) -> dict[str, list[dict[str, float]]]:
    """Every repetition and seed of ``pair`` on both sides, alternating which side goes first."""
    results: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    for rep in range(reps):
        for seed in range(seeds):
            order = SIDES if (rep + seed) % 2 == 0 else SIDES[::-1]
            for side in order:
                results[side].append(run_side(work, pair, side, steps, seed, rep))
                print(pair, side, f"seed {seed} rep {rep}:", results[side][-1], flush=True)
    return results


def rows(pair: str, steps: int, results: dict[str, list[dict[str, float]]]) -> list[list[object]]:
    """One table row per side, then the jax / torch ratios."""
    summary = {side: {key: median([r[key] for r in runs]) for key in runs[0]} for side, runs in results.items()}
    lines: list[list[object]] = []
    for side in SIDES:
        s = summary[side]
        returns = ", ".join(f"{r['return']:.1f}" for r in results[side])
        fit = int(MEMORY_BUDGET_GB * 1024 // s["peak_mb"])
        lines.append([pair, steps, side, f"{s['wall']:.1f}", f"{s['cpu']:.1f}", f"{s['peak_mb']:.0f}", fit, returns])
    wall = summary["jax"]["wall"] / summary["torch"]["wall"]
    cpu = summary["jax"]["cpu"] / summary["torch"]["cpu"]
    lines.append([pair, steps, "jax / torch", f"{wall:.2f}", f"{cpu:.2f}", "", "", ""])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="+", choices=list(PAIRS), default=["pendulum-sac", "cartpole-dqn"])
    parser.add_argument("--steps", type=int, default=None, help="budget of every pair (default: the preset's)")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="write the zoo_jax section of BENCHMARKS.md")
    parser.add_argument("--quick", action="store_true", help="CartPole DQN at 300 steps, printed only")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.steps, args.write = ["cartpole-dqn"], 300, False
    header = ["pair", "steps", "backend", "wall s", "CPU s", "peak MB", f"jobs in {MEMORY_BUDGET_GB} GiB", "returns"]
    body: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="zoo-jax-") as folder:
        for pair in args.pairs:
            steps = args.steps or PAIRS[pair][2]
            body += rows(pair, steps, measure(pair, steps, args.reps, args.seeds, Path(folder)))
    text = (
        table(header, body)
        + f"\n\nWhole `python -m rlrun` processes, `torch_threads=1` (XLA's threads too), medians of {args.reps} "
        + f"repetition(s) x {args.seeds} seed(s), sides alternating. {versions(packages=PACKAGES)}.\n"
    )
    print(text)
    if args.write:
        write_section("zoo_jax", text)


if __name__ == "__main__":
    main()
