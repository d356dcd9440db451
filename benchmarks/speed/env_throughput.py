"""Steps per second of the rlrun envs, next to Gymnasium's CartPole-v1: one env, and many copies at once.

Single envs: every env is made with ``gym.make`` (so the registration's wrappers are included, equally for
all), actions are sampled before the clock starts, and the env is reset whenever an episode ends.
Many copies: SB3's ``DummyVecEnv`` over ``gym.make`` next to the native batched env (``rlrun.envs.batched``, what
``env.vectorization=native`` trains on) at 8, 64, 1,024 and 4,096 copies, counting env steps (copies times
vec-env steps), auto-resets included (native envs step at least two episode lengths, so that resets count).
The measurements take turns over several repetitions, so that background noise hits all of them alike; the
tables show medians, targets and whether they are met. This is a measurement, not a test: the exit status
is always 0.

    python -m benchmarks.speed.env_throughput [--steps 20000] [--reps 7] [--vec-steps 100000] [--json] [--write]

``--write`` puts the tables into BENCHMARKS.md (section ``env_throughput``).
"""

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from rlrun.envs import batched
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from benchmarks import common
from rlrun import envs

BASELINE = "CartPole-v1"
# Smallest acceptable ratio to CartPole's steps/s.
TARGETS = {
    "rlrun/PointEnv-v0": 1.0,
    "rlrun/GridWorld-v0": 0.7,
    "rlrun/PointGoal-v0": 0.7,
    "rlrun/RoomToy-v0": 1.0,
}
COPIES = (8, 64, 1024, 4096)
# Smallest acceptable env steps/s of the native batched envs at TARGET_COPIES copies (issue 12).
NATIVE_TARGETS = {
    "rlrun/PointEnv-v0": 5_000_000,
    "rlrun/GridWorld-v0": 1_000_000,
    "rlrun/PointGoal-v0": 1_000_000,
    "rlrun/RoomToy-v0": 1_000_000,
}
TARGET_COPIES = 1024


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


def format_table(rows: list[dict[str, Any]], steps: int, reps: int) -> str:
    """The single-env rows as an aligned text table."""
    lines = [f"{steps} steps x {reps} repetitions per env, medians; gym.make, pre-sampled random actions", ""]
    header = f"{'env':<22} {'steps/s':>9} {'min':>9} {'max':>9} {'x CartPole':>11} {'target':>7}  ok"
    lines += [header, "-" * len(header)]
    for row in rows:
        target = "" if row["target_ratio"] is None else f">= {row['target_ratio']:.1f}"
        ok = {None: "", True: "yes", False: "NO"}[row["meets_target"]]
        lines.append(
            f"{row['env_id']:<22} {row['median_steps_per_s']:>9,} {row['min_steps_per_s']:>9,} "
            f"{row['max_steps_per_s']:>9,} {row['ratio_to_cartpole']:>11.2f} {target:>7}  {ok}".rstrip()
        )
    return "\n".join(lines)


def vec_steps_per_second(venv: VecEnv, actions: list[np.ndarray], env_steps: int, min_calls: int = 5) -> float:
    """Step ``venv`` (auto-resetting) for about ``env_steps`` env steps, at least ``min_calls`` times; return
    env steps per second."""
    venv.reset()
    step, count = venv.step, len(actions)
    calls = max(env_steps // venv.num_envs, min_calls)
    start = time.perf_counter()
    for k in range(calls):
        step(actions[k % count])
    return calls * venv.num_envs / (time.perf_counter() - start)


def _makers(env_id: str, copies: int) -> dict[str, Callable[[], VecEnv]]:
    makers: dict[str, Callable[[], VecEnv]] = {
        "dummy": lambda: DummyVecEnv([lambda: gym.make(env_id) for _ in range(copies)]),
    }
    if env_id in batched.ENV_CLASSES:
        makers["native"] = lambda: batched.make_vec_env(env_id, copies, seed=0)
    return makers


def measure_vec(
    env_ids: list[str], copies: tuple[int, ...], env_steps: int, reps: int
) -> dict[tuple[str, int, str], list[float]]:
    """Env steps/s of DummyVecEnv and the native env per (env, copies), in every repetition, taking turns."""
    made: dict[tuple[str, int, str], VecEnv] = {}
    actions: dict[tuple[str, int], list[np.ndarray]] = {}
    for env_id in env_ids:
        space = gym.make(env_id).action_space
        space.seed(0)
        for n in copies:
            actions[env_id, n] = [np.stack([space.sample() for _ in range(n)]) for _ in range(8)]
            for kind, make in _makers(env_id, n).items():
                made[env_id, n, kind] = make()
                vec_steps_per_second(made[env_id, n, kind], actions[env_id, n], min(env_steps, 5 * n))  # warm-up
    results: dict[tuple[str, int, str], list[float]] = {key: [] for key in made}
    # Native envs step at least two episode lengths, so that their resets (done for the finished copies
    # together) weigh as in training; DummyVecEnv's cost per copy hardly depends on it.
    limits = {env_id: gym.spec(env_id).max_episode_steps or 1 for env_id in env_ids}
    for _ in range(reps):
        for (env_id, n, kind), venv in made.items():
            min_calls = 2 * limits[env_id] if kind == "native" else 5
            results[env_id, n, kind].append(vec_steps_per_second(venv, actions[env_id, n], env_steps, min_calls))
    for venv in made.values():
        venv.close()
    return results


def summarise_vec(results: dict[tuple[str, int, str], list[float]]) -> list[dict[str, Any]]:
    """One row per (env, copies): median env steps/s of DummyVecEnv and native, speed-up, target, met."""
    rows = []
    for env_id, n in dict.fromkeys((env_id, n) for env_id, n, _ in results):
        dummy = statistics.median(results[env_id, n, "dummy"])
        native = statistics.median(results[env_id, n, "native"]) if (env_id, n, "native") in results else None
        target = NATIVE_TARGETS.get(env_id) if n == TARGET_COPIES else None
        rows.append(
            {
                "env_id": env_id,
                "copies": n,
                "dummy_steps_per_s": round(dummy),
                "native_steps_per_s": None if native is None else round(native),
                "speedup": None if native is None else round(native / dummy, 1),
                "native_target": target,
                "meets_target": None if target is None or native is None else native >= target,
            }
        )
    return rows


def format_vec_table(rows: list[dict[str, Any]], env_steps: int, reps: int) -> str:
    """The many-copies rows as an aligned text table (env steps per second, all copies together)."""
    lines = [
        f"about {env_steps} env steps x {reps} repetitions per row, medians; env steps/s of all copies together",
        "",
    ]
    header = f"{'env':<22} {'copies':>6} {'DummyVecEnv':>12} {'native':>12} {'speed-up':>9} {'target':>11}  ok"
    lines += [header, "-" * len(header)]
    for row in rows:
        native = "–" if row["native_steps_per_s"] is None else f"{row['native_steps_per_s']:,}"
        speedup = "–" if row["speedup"] is None else f"{row['speedup']:.1f}x"
        target = "" if row["native_target"] is None else f">= {row['native_target']:,}"
        ok = {None: "", True: "yes", False: "NO"}[row["meets_target"]]
        lines.append(
            f"{row['env_id']:<22} {row['copies']:>6,} {row['dummy_steps_per_s']:>12,} {native:>12} {speedup:>9} "
            f"{target:>11}  {ok}".rstrip()
        )
    return "\n".join(lines)


def report(single: str, vec: str) -> str:
    """Both tables with the versions, as printed and as written into BENCHMARKS.md."""
    versions = f"python {platform.python_version()}, gymnasium {gym.__version__}, numpy {np.__version__}"
    many = "Many copies (DummyVecEnv over gym.make vs native batched):"
    return f"{versions}\n\nOne env (gym.make):\n\n{single}\n\n{many}\n\n{vec}\n"


def write_benchmarks_md(text: str) -> None:
    """Rewrite the ``env_throughput`` section of BENCHMARKS.md (only that section)."""
    body = (
        "## Env throughput\n\n"
        "`python -m benchmarks.speed.env_throughput --write` (2 shared CPU cores, so absolute numbers vary with the "
        "load; the ratios much less).\n\n```\n" + text.rstrip("\n") + "\n```"
    )
    common.write_section("env_throughput", body)


def main() -> None:
    """Parse the options, measure, and print the tables (or JSON with ``--json``); ``--write`` BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps per single env and repetition")
    parser.add_argument("--reps", type=int, default=7, help="repetitions (the measurements take turns)")
    parser.add_argument("--vec-steps", type=int, default=100_000, help="env steps per vec env and repetition")
    parser.add_argument("--copies", type=int, nargs="+", default=list(COPIES), help="copies of the vec envs")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of tables")
    parser.add_argument("--write", action="store_true", help="write the tables into BENCHMARKS.md")
    args = parser.parse_args()
    if args.steps < 1 or args.reps < 1 or args.vec_steps < 1 or min(args.copies) < 1:
        parser.error("--steps, --reps, --vec-steps and --copies must be >= 1")

    env_ids = [*envs.ENV_IDS, BASELINE]
    rows = summarise(measure(env_ids, args.steps, args.reps))
    vec_rows = summarise_vec(measure_vec(env_ids, tuple(args.copies), args.vec_steps, args.reps))
    if args.json:
        print(json.dumps({"steps": args.steps, "reps": args.reps, "results": rows, "vec": vec_rows}, indent=2))
        return
    text = report(format_table(rows, args.steps, args.reps), format_vec_table(vec_rows, args.vec_steps, args.reps))
    print(text)
    if args.write:
        write_benchmarks_md(text)
        print(f"written to {common.BENCHMARKS_MD} (section env_throughput)")


if __name__ == "__main__":
    main()
