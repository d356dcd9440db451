"""Benchmark 6, time to solve: each preset against SB3's defaults (``~tuned``) for the same env and algorithm.

For every preset in ``conf/tuned/`` and seeds 0-4: one run with the preset and its budget, one with
``~tuned`` and five times that budget, both evaluating every tenth of the preset's budget. Time to solve
is the ``wall_s`` of the first ``eval.csv`` row that reaches the threshold (DESIGN.md's steps-to-threshold
rule, ``rlrun.table_stats.threshold``); a run is stopped (SIGTERM, which snapshots and ends it cleanly) as
soon as it gets there. Medians over seeds; a side that most seeds never solve is "not solved within N
steps". Goal: presets at least 3 times faster.
"""

from __future__ import annotations

import csv
import math
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import PYTHON, ROOT, median, provenance, table

SEEDS = (0, 1, 2, 3, 4)
BUDGET_FACTOR = 5
GOAL = 3.0
PRESETS = sorted(p.stem for p in (ROOT / "conf" / "tuned").glob("*.yaml"))


def _budget(pair: str) -> tuple[str, str, int]:
    from hydra import compose, initialize_config_module

    import rlrun  # noqa: F401  (registers the schema and resolvers)

    env, algo = pair.split("_")
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"env={env}", f"algo={algo}"])
    return env, algo, int(cfg.total_timesteps)


def _solved_at(run_dir: Path, env_id: str) -> float | None:
    """``wall_s`` of the first evaluation that reached the threshold, if any."""
    from rlrun.table_stats import threshold

    path = run_dir / "eval.csv"
    if not path.exists():
        return None
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    target = threshold(env_id, reports_success=rows[0]["success_rate"] != "")
    if target is None:
        raise ValueError(f"{env_id} has no threshold (no success and no reward_threshold)")
    for row in rows:
        if row[target["metric"]] != "" and float(row[target["metric"]]) >= target["value"]:
            return float(row["wall_s"])
    return None


def solve(cmd: list[str], run_dir: Path, env_id: str, log: Path) -> float:
    """Run until solved (then stop it) or until the budget is spent; seconds to solve, or inf."""
    with open(log, "w") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        while process.poll() is None:
            time.sleep(0.5)
            if _solved_at(run_dir, env_id) is not None:
                process.send_signal(signal.SIGTERM)
                process.wait()
    solved = _solved_at(run_dir, env_id)
    return math.inf if solved is None else solved


def _fmt(seconds: float, steps: int) -> str:
    return f"not solved within {steps:,} steps" if math.isinf(seconds) else f"{seconds:.1f}"


def run(quick: bool, pairs: list[str] | None = None) -> str:
    """Every preset (or ``pairs``); the Markdown section."""
    pairs = pairs or (["gridworld_ppo"] if quick else PRESETS)
    seeds = SEEDS[:2] if quick else SEEDS
    rows = []
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        for pair in pairs:
            env, algo, budget = _budget(pair)
            budget = max(budget // 10, 1000) if quick else budget
            every = max(budget // 10, 1)
            env_id = _env_id(env)
            times: dict[str, list[float]] = {"preset": [], "~tuned": []}
            for seed in seeds:
                for side, extra, steps in (("preset", [], budget), ("~tuned", ["~tuned"], BUDGET_FACTOR * budget)):
                    run_dir = work / f"{pair}-{side.strip('~')}-{seed}"
                    cmd = [PYTHON, "-m", "rlrun", f"env={env}", f"algo={algo}", *extra, f"seed={seed}"]
                    cmd += [f"total_timesteps={steps}", f"eval.every={every}", "snapshot.every=1000000000"]
                    cmd += ["progress_bar=false", f"hydra.run.dir={run_dir}"]
                    times[side].append(solve(cmd, run_dir, env_id, work / f"{run_dir.name}.log"))
            preset, default = median(times["preset"]), median(times["~tuned"])
            ratio = default / preset if math.isfinite(preset) else math.nan
            verdict = "met" if ratio >= GOAL else f"NOT met ({ratio:.1f}x)" if math.isfinite(ratio) else "NOT met"
            rows.append(
                [
                    pair,
                    f"{budget:,}",
                    _fmt(preset, budget),
                    _fmt(default, BUDGET_FACTOR * budget),
                    f"{ratio:.1f}",
                    verdict,
                ]
            )
    body = [
        "## Time to solve: presets against SB3's defaults",
        "",
        "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goal is about).**\n"
        if quick
        else "",
        f"Median over seeds {', '.join(map(str, seeds))} of the training seconds (`eval.csv` `wall_s`) until the "
        "first evaluation that reaches the threshold (success rate >= 0.9, or the env's reward threshold; "
        f"Pendulum -200); evaluations every tenth of the preset's budget; `~tuned` gets {BUDGET_FACTOR}x the budget. "
        f"Goal: ~tuned / preset >= {GOAL}.",
        "",
        table(["preset", "budget", "preset s", "~tuned s", "ratio", "goal"], rows),
        "",
        provenance(
            f"python -m benchmarks --only time_to_solve{' --quick' if quick else ''}",
            len(seeds),
            how="one per seed, each a whole `python -m rlrun` process stopped once solved",
        ),
    ]
    return "\n".join(body)


def _env_id(env: str) -> str:
    from omegaconf import OmegaConf

    return str(OmegaConf.load(ROOT / "conf" / "env" / f"{env}.yaml").id)
