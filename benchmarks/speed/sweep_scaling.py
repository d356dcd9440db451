"""A seed sweep with the joblib launcher against the same sweep with Hydra's basic (one-at-a-time) launcher.

Each sweep is a whole ``python -m rlrun -m`` process, as a user runs it: GridWorld with PPO (its preset),
``--seeds`` seeds at ``--steps`` steps. The two launchers alternate (basic, joblib, basic, joblib, ...),
so machine noise hits both alike. Reported: the median wall time of each, the speed-up (goal: at least
1.8 on 2 cores, where 2.0 is the limit) and the peak memory of the whole sweep: the sum over its process tree
(the sweep's process, joblib's fork server and workers) of each process's proportional set size (PSS, its
resident memory with pages shared between processes counted once in all), sampled every 2 s on
Linux's /proc (a sample costs about 10 ms of CPU per large process, taken from the sweep it measures).
The table is written into BENCHMARKS.md between its ``sweep_scaling`` markers (only that section).

    python -m benchmarks.speed.sweep_scaling                                # 4 seeds x 50k steps, 2 rounds
    python -m benchmarks.speed.sweep_scaling --steps 2000 --seeds 2 --rounds 1 --out /tmp/b.md   # a quick try
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from benchmarks import common

GOAL = 1.8
LAUNCHERS = ("basic", "joblib")


@dataclass
class Sweep:
    """What one sweep process cost."""

    launcher: str
    wall_s: float
    peak_pss_mb: float
    completed: int
    jobs_s: float  # the sum of the jobs' own seconds (run.json's wall_s: training and evaluation)


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc/<pid>/stat (the parent pid is the 4th field)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_mb(root: int) -> float:
    """Memory of ``root`` and all its descendants (PSS: shared pages counted once), in MiB."""
    children, pending, total = _children(), [root], 0
    while pending:
        pid = pending.pop()
        total += _pss_kb(pid)
        pending.extend(children.get(pid, []))
    return total / 1024


def run_sweep(launcher: str, seeds: int, steps: int, workdir: Path, name: str) -> Sweep:
    """Run one sweep as its own process in ``workdir`` and sample its process tree until it ends."""
    command = [
        sys.executable,
        "-m",
        "rlrun",
        "-m",
        "env=gridworld",
        "algo=ppo",
        f"seed=range({seeds})",
        f"total_timesteps={steps}",
        "progress_bar=false",
        f"sweep={name}",
        f"hydra/launcher={launcher}",
    ]
    peak = 0.0
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.append(process.stderr.read() if process.stderr else ""))
    reader.start()
    while process.poll() is None:
        peak = max(peak, tree_pss_mb(process.pid))
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2.0)  # returns as soon as the sweep ends
    wall = time.perf_counter() - started
    reader.join()
    if process.returncode != 0:
        sys.exit(f"{launcher} sweep failed (exit {process.returncode}):\n{stderr[0][-3000:]}")
    records = [json.loads(p.read_text()) for p in (workdir / "outputs" / "sweeps" / name).glob("**/run.json")]
    completed = sum(record["status"] == "completed" for record in records)
    return Sweep(launcher, wall, peak, completed, sum(record["wall_s"] for record in records))


def section(results: dict[str, list[Sweep]], args: argparse.Namespace) -> str:
    """The Markdown section of BENCHMARKS.md."""
    basic, joblib = (statistics.median(s.wall_s for s in results[name]) for name in LAUNCHERS)
    speedup = basic / joblib
    lines = [
        "## Sweep scaling: joblib against the basic launcher",
        "",
        f"`python -m benchmarks.speed.sweep_scaling --seeds {args.seeds} --steps {args.steps} --rounds {args.rounds}`: "
        f"GridWorld PPO (preset), {args.seeds} seeds x {args.steps} steps, whole `python -m rlrun -m` processes, "
        f"launchers alternated, {args.rounds} round(s); {os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        "| launcher | wall s (median) | each round, s | the jobs' own s (sum, median) | peak memory of the sweep "
        "(PSS), MiB | jobs completed |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for name in LAUNCHERS:
        sweeps = results[name]
        rounds = ", ".join(f"{s.wall_s:.1f}" for s in sweeps)
        median = statistics.median(s.wall_s for s in sweeps)
        peak = max(s.peak_pss_mb for s in sweeps)
        jobs = statistics.median(s.jobs_s for s in sweeps)
        completed = min(s.completed for s in sweeps)
        lines.append(f"| {name} | {median:.1f} | {rounds} | {jobs:.1f} | {peak:.0f} | {completed} |")
    verdict = "met" if speedup >= GOAL else "NOT met"
    per_round = [b.wall_s / j.wall_s for b, j in zip(results["basic"], results["joblib"], strict=True)]
    if len(per_round) > 1 and (speedup >= GOAL) != (statistics.median(per_round) >= GOAL):
        verdict += ", within the noise: the median of the rounds' own ratios says the opposite"
    jobs_basic, jobs_joblib = (statistics.median(s.jobs_s for s in results[name]) for name in LAUNCHERS)
    workers = os.cpu_count() or 1
    lines += [
        "",
        f"Speed-up of joblib: **{speedup:.2f}x** (goal >= {GOAL}x: {verdict}), the ratio of the medians. "
        f"Each round's own ratio (basic / joblib of the same round): {', '.join(f'{r:.2f}' for r in per_round)} "
        f"(median {statistics.median(per_round):.2f}).",
        "",
        f"Outside the jobs' own seconds (start-up, the checks before the first job, the jobs' set-up, the table): "
        f"basic {basic - jobs_basic:.1f} s; joblib {joblib - jobs_joblib / workers:.1f} s, counting the jobs' "
        f"seconds over its {workers} workers. Side by side, a job took {jobs_joblib / jobs_basic - 1:+.0%} of its "
        f"time alone. With nothing outside the jobs the speed-up would be {jobs_basic / (jobs_joblib / workers):.2f}x; "
        "what both launchers pay outside them weighs twice as much in the shorter sweep: the goal allows joblib "
        f"{basic / GOAL - jobs_joblib / workers:.1f} s outside the jobs.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=2, help="times each launcher runs, alternating")
    parser.add_argument("--out", type=Path, default=common.BENCHMARKS_MD)
    args = parser.parse_args()
    results: dict[str, list[Sweep]] = {name: [] for name in LAUNCHERS}
    with tempfile.TemporaryDirectory(prefix="rlrun-sweep-scaling-") as tmp:
        for round_ in range(args.rounds):
            for name in LAUNCHERS:
                sweep = run_sweep(name, args.seeds, args.steps, Path(tmp), f"{name}-{round_}")
                print(f"round {round_ + 1}: {name:<6} {sweep.wall_s:7.1f} s, peak PSS {sweep.peak_pss_mb:6.0f} MiB")
                results[name].append(sweep)
    text = section(results, args)
    print("\n" + text)
    common.write_section("sweep_scaling", text, args.out)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
