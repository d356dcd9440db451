"""Steps per second of the rlrun envs, next to Gymnasium's CartPole-v1.

Every env is made with ``gym.make`` (so the registration's wrappers are included, equally for all), actions
are sampled before the clock starts, and the env is reset whenever an episode ends. The envs take turns over
several repetitions, so that background noise hits all of them alike; the table shows medians and each env's
ratio to CartPole next to its target. This is a measurement, not a test: the exit status is always 0.

    python benchmarks/env_throughput.py [--steps 20000] [--reps 7] [--json]
"""

import argparse
import json
import platform
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import envs

BASELINE = "CartPole-v1"
# Smallest acceptable ratio to CartPole's steps/s.
TARGETS = {
    "rlrun/PointEnv-v0": 1.0,
    "rlrun/GridWorld-v0": 0.7,
    "rlrun/PointGoal-v0": 0.7,
    "rlrun/RoomToy-v0": 1.0,
}


def steps_per_second(env: gym.Env[Any, Any], actions: list[Any], seed: int) -> float:
    """Step ``env`` through ``actions`` (resetting at episode ends) and return the steps per second."""
    env.reset(seed=seed)
    step, reset = env.step, env.reset
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            reset()
    return len(actions) / (time.perf_counter() - start)


def measure(env_ids: list[str], steps: int, reps: int, seed: int = 0) -> dict[str, list[float]]:
    """Return the steps/s of every env in every repetition, the envs taking turns (round-robin)."""
    made = {env_id: gym.make(env_id) for env_id in env_ids}
    actions = {}
    for env_id, env in made.items():
        env.action_space.seed(seed)
        actions[env_id] = [env.action_space.sample() for _ in range(steps)]
        steps_per_second(env, actions[env_id][: min(steps, 1000)], seed)  # warm-up
    results: dict[str, list[float]] = {env_id: [] for env_id in env_ids}
    for rep in range(reps):
        for env_id in env_ids:
            results[env_id].append(steps_per_second(made[env_id], actions[env_id], seed + rep))
    for env in made.values():
        env.close()
    return results


def summarise(results: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Return one row per env: median steps/s, spread, ratio to CartPole, target and whether it is met."""
    baseline = statistics.median(results[BASELINE])
    rows = []
    for env_id, values in results.items():
        median = statistics.median(values)
        target = TARGETS.get(env_id)
        rows.append(
            {
                "env_id": env_id,
                "median_steps_per_s": round(median),
                "min_steps_per_s": round(min(values)),
                "max_steps_per_s": round(max(values)),
                "ratio_to_cartpole": round(median / baseline, 3),
                "target_ratio": target,
                "meets_target": None if target is None else median / baseline >= target,
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]], steps: int, reps: int) -> None:
    """Print the rows as an aligned text table."""
    print(f"{steps} steps x {reps} repetitions per env, medians; gym.make, pre-sampled random actions")
    print(f"python {platform.python_version()}, gymnasium {gym.__version__}, numpy {np.__version__}")
    print()
    header = f"{'env':<22} {'steps/s':>9} {'min':>9} {'max':>9} {'x CartPole':>11} {'target':>7}  ok"
    print(header)
    print("-" * len(header))
    for row in rows:
        target = "" if row["target_ratio"] is None else f">= {row['target_ratio']:.1f}"
        ok = {None: "", True: "yes", False: "NO"}[row["meets_target"]]
        print(
            f"{row['env_id']:<22} {row['median_steps_per_s']:>9,} {row['min_steps_per_s']:>9,} "
            f"{row['max_steps_per_s']:>9,} {row['ratio_to_cartpole']:>11.2f} {target:>7}  {ok}".rstrip()
        )


def main() -> None:
    """Parse the options, measure, and print a table (or JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps per env and repetition")
    parser.add_argument("--reps", type=int, default=7, help="repetitions (the envs take turns)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    args = parser.parse_args()
    if args.steps < 1 or args.reps < 1:
        parser.error(f"--steps and --reps must be >= 1, got {args.steps} and {args.reps}")

    results = measure([*envs.ENV_IDS, BASELINE], args.steps, args.reps)
    rows = summarise(results)
    if args.json:
        print(json.dumps({"steps": args.steps, "reps": args.reps, "results": rows}, indent=2))
    else:
        print_table(rows, args.steps, args.reps)


if __name__ == "__main__":
    main()
