"""Time to solve: each preset against SB3's defaults (``~tuned``) for the same env and algorithm.

For every preset in ``conf/tuned/`` and seeds 0-4: one run with the preset and its budget, one with
``~tuned`` and five times that budget, both evaluating every tenth of the preset's budget. Time to solve
is the ``wall_s`` of the first ``eval.csv`` row that reaches the threshold (DESIGN.md's steps-to-threshold
rule, ``rlrun.table.stats.threshold``); a run is stopped (SIGTERM, which snapshots and ends it cleanly) as
soon as it gets there. Medians over seeds; a side that most seeds never solve is "not solved within N
steps". Goal: presets at least 3 times faster.

With ``jobs`` > 1 that many runs go side by side (one torch thread each), in the order preset, ~tuned of
one seed, then the next seed: both sides share the machine alike, and the hours the ~tuned side needs to
spend its budget are halved on 2 cores.
"""

from __future__ import annotations

import csv
import math
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import PYTHON, ROOT, median, provenance, table
from benchmarks.verified_presets import PRESETS

SEEDS = (0, 1, 2, 3, 4)
BUDGET_FACTOR = 5
GOAL = 3.0


def _budget(pair: str) -> tuple[str, str, int]:
    from hydra import compose, initialize_config_module

    import rlrun  # noqa: F401  (registers the schema and resolvers)

    env, algo = pair.split("_")
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"env={env}", f"algo={algo}"])
    return env, algo, int(cfg.total_timesteps)


def _solved_at(run_dir: Path, env_id: str) -> float | None:
    """``wall_s`` of the first evaluation that reached the threshold, if any."""
    from rlrun.table.stats import threshold

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


@dataclass
class Attempt:
    """One run of the benchmark: its command, folder and log; ``seconds`` to solve (inf: never) once ended."""

    cmd: list[str]
    run_dir: Path
    env_id: str
    log: Path
    seconds: float = math.nan


def solve(attempts: list[Attempt], jobs: int) -> None:
    """Run ``attempts``, ``jobs`` at a time; each until solved (then stopped) or until its budget is spent."""
    pending = list(attempts)
    running: dict[subprocess.Popen[bytes], Attempt] = {}
    while pending or running:
        while pending and len(running) < jobs:
            attempt = pending.pop(0)
            with open(attempt.log, "w") as out:
                running[subprocess.Popen(attempt.cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)] = attempt
        time.sleep(0.5)
        for process, attempt in list(running.items()):
            if process.poll() is None and _solved_at(attempt.run_dir, attempt.env_id) is not None:
                process.send_signal(signal.SIGTERM)
                process.wait()
            if process.poll() is not None:
                del running[process]
                solved = _solved_at(attempt.run_dir, attempt.env_id)
                attempt.seconds = math.inf if solved is None else solved
                print(f"time_to_solve: {attempt.run_dir.name}: {attempt.seconds:.1f} s", flush=True)


def _fmt(seconds: float, steps: int) -> str:
    return f"not solved within {steps:,} steps" if math.isinf(seconds) else f"{seconds:.1f}"


def run(quick: bool, pairs: list[str] | None = None, jobs: int = 1) -> str:
    """Every preset (or ``pairs``), ``jobs`` runs at a time; the Markdown section."""
    pairs = pairs or (["gridworld_ppo"] if quick else PRESETS)  # verified only: RL Zoo's have budgets of 1M and more
    seeds = SEEDS[:2] if quick else SEEDS
    rows = []
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        plans, order = [], []
        for pair in pairs:
            env, algo, budget = _budget(pair)
            budget = max(budget // 10, 1000) if quick else budget
            every = max(budget // 10, 1)
            sides: dict[str, list[Attempt]] = {"preset": [], "~tuned": []}
            for seed in seeds:
                for side, extra, steps in (("preset", [], budget), ("~tuned", ["~tuned"], BUDGET_FACTOR * budget)):
                    run_dir = work / f"{pair}-{side.strip('~')}-{seed}"
                    cmd = [PYTHON, "-m", "rlrun", f"env={env}", f"algo={algo}", *extra, f"seed={seed}"]
                    cmd += [f"total_timesteps={steps}", f"eval.every={every}", "snapshot.every=1000000000"]
                    cmd += ["progress_bar=false", f"hydra.run.dir={run_dir}"]
                    sides[side].append(Attempt(cmd, run_dir, _env_id(env), work / f"{run_dir.name}.log"))
                    order.append(sides[side][-1])
            plans.append((pair, budget, sides))
        solve(order, jobs)
        for pair, budget, sides in plans:
            preset = median([a.seconds for a in sides["preset"]])
            default = median([a.seconds for a in sides["~tuned"]])
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
            f"python -m benchmarks --only time_to_solve{' --quick' if quick else ''}"
            + (f" --jobs {jobs}" if jobs > 1 else ""),
            len(seeds),
            how="one per seed, each a whole `python -m rlrun` process stopped once solved"
            + (f"; {jobs} runs side by side, the two sides of a seed together" if jobs > 1 else ""),
        ),
    ]
    return "\n".join(body)


def _env_id(env: str) -> str:
    from omegaconf import OmegaConf

    return str(OmegaConf.load(ROOT / "conf" / "env" / f"{env}.yaml").id)
