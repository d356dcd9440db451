"""Wall time to reach GridWorld's threshold: today's PPO preset (8 gym copies) vs many native copies.

Each setting trains ``env=gridworld algo=ppo`` (the tuned preset ``conf/tuned/gridworld_ppo.yaml``) through
``rlrun.run.training.train`` for several seeds, the settings taking turns so that background load hits them alike,
with the same evaluations (``eval.every``, ``eval.episodes``). A run's time to threshold is the training
wall time (``eval.csv``'s ``wall_s``, evaluations included) at its first evaluation with a success rate of
at least 0.9; the table shows medians over the seeds. This is a measurement, not a test.

    python -m benchmarks.scores.native_preset [--seeds 3] [--write]

``--write`` puts the table into BENCHMARKS.md (section ``native_preset``).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import common
from rlrun.run.training import train

THRESHOLD = 0.9
COMMON = ["env=gridworld", "algo=ppo", "progress_bar=false", "eval.every=2048", "eval.episodes=20"]
# name -> overrides on top of the preset
SETTINGS: dict[str, list[str]] = {
    "preset (gym, 8 copies)": [],
    "native, 64 copies": ["env.vectorization=native", "env.n_envs=64", "algo.n_steps=16"],
    "native, 256 copies": ["env.vectorization=native", "env.n_envs=256", "algo.n_steps=8", "algo.batch_size=512"],
}


def time_to_threshold(run_dir: Path) -> tuple[float | None, int | None]:
    """Wall seconds and steps at the first evaluation with success >= THRESHOLD (None, None if never)."""
    with open(run_dir / "eval.csv") as f:
        for row in csv.DictReader(f):
            if row["success_rate"] and float(row["success_rate"]) >= THRESHOLD:
                return float(row["wall_s"]), int(row["timesteps"])
    return None, None


def measure(seeds: int) -> dict[str, list[dict[str, Any]]]:
    """Train every setting for seeds 0 .. seeds-1, taking turns; one record per run."""
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            for index, (name, overrides) in enumerate(SETTINGS.items()):
                cfg = common.compose_config(*COMMON, *overrides, f"seed={seed}")
                run_dir = Path(tmp) / f"{index}-{seed}"
                final = train(cfg, run_dir, {"env": "gridworld", "algo": "ppo"})
                wall, steps = time_to_threshold(run_dir)
                results[name].append(
                    {
                        "seed": seed,
                        "wall_to_threshold": wall,
                        "steps_to_threshold": steps,
                        "final_success": final["success_rate"],
                        "overrides": overrides,
                    }
                )
                print(f"{name:<24} seed {seed}: threshold after {steps} steps, {wall} s", file=sys.stderr)
    return results


def table(results: dict[str, list[dict[str, Any]]], seeds: int) -> str:
    """Medians per setting as an aligned text table."""
    header = f"{'setting':<24} {'s to 0.9':>9} {'steps to 0.9':>13} {'reached':>8} {'final success':>14}  overrides"
    lines = [f"env=gridworld algo=ppo (preset), seeds 0-{seeds - 1}, medians; eval every 2048 steps, 20 episodes", ""]
    lines += [header, "-" * len(header)]
    for name, runs in results.items():
        reached = [r for r in runs if r["wall_to_threshold"] is not None]
        wall = f"{statistics.median(r['wall_to_threshold'] for r in reached):.1f}" if reached else "–"
        steps = f"{statistics.median(r['steps_to_threshold'] for r in reached):,.0f}" if reached else "–"
        final = statistics.median(r["final_success"] for r in runs)
        overrides = " ".join(runs[0]["overrides"]) or "(none)"
        lines.append(f"{name:<24} {wall:>9} {steps:>13} {len(reached):>4}/{len(runs):<3} {final:>14.2f}  {overrides}")
    return "\n".join(lines)


def main() -> None:
    """Parse the options, train, print the table; ``--write`` puts it into BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per setting")
    parser.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    text = table(measure(args.seeds), args.seeds)
    print(text)
    if args.write:
        body = (
            "## Many native copies: GridWorld PPO\n\n`python -m benchmarks.scores.native_preset --write` (2 shared CPU "
            "cores: wall times vary with the load; the settings take turns).\n\n```\n" + text + "\n```"
        )
        common.write_section("native_preset", body)
        print(f"written to {common.BENCHMARKS_MD} (section native_preset)")


if __name__ == "__main__":
    main()
