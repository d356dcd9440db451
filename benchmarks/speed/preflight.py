"""How long the checks at the start of every run take (rlrun.checks.preflight.preflight), next to what they guard.

For each env/algo pair: the median time of ``preflight(cfg)`` (ranges, algorithm arguments, env and
algorithm fit, one probe env) and, measured alternately in the same process, of building the training
env and the model, the first heavy step of a run. Target: preflight under 0.2 s for every pair.

    python -m benchmarks.speed.preflight [--reps 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from hydra import compose, initialize_config_module

from rlrun.make import models, vec_envs
from rlrun.run.dry_run import preflight

PAIRS = [
    ("gridworld", "ppo"),
    ("pointenv", "sac"),
    ("pointgoal", "her"),
    ("roomtoy", "dqn"),
    ("cartpole", "a2c"),
]
TARGET_S = 0.2


def timed(fn, cfg) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn(cfg)
    return time.perf_counter() - started


def build_model(cfg) -> None:  # type: ignore[no-untyped-def]
    env = vec_envs.make_train_env(cfg)
    models.make_model(cfg, env)
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    header = f"{'pair':<18} {'preflight ms':>12} {'env+model ms':>13} {'ratio':>7}"
    print(f"{header}  target < {TARGET_S * 1000:.0f} ms")
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        for env, algo in PAIRS:
            cfg = compose("config", overrides=[f"env={env}", f"algo={algo}"])
            preflight(cfg)  # warm imports and caches
            checks, models = [], []
            for _ in range(args.reps):  # alternated, so machine noise hits both alike
                checks.append(timed(preflight, cfg))
                models.append(timed(build_model, cfg))
            check, model = statistics.median(checks), statistics.median(models)
            ok = "yes" if check < TARGET_S else "NO"
            row = f"{env + '-' + algo:<18} {check * 1000:>12.1f} {model * 1000:>13.1f} {check / model:>7.2f}"
            print(f"{row}  {ok}")


if __name__ == "__main__":
    main()
