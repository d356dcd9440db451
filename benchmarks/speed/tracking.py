"""Tracking's cost: ``python -m benchmarks.speed.tracking [--reps 3] [--steps 100000] [--quick]``.

Sides (whole processes, alternating, after a short round that is not counted and creates the stores):
``tensorboard`` (the default logger), ``mlflow local`` (``logger=[tensorboard,mlflow]``, the SQLite store in the
outputs folder) and ``mlflow server`` (the same against an ``mlflow server`` started here on 127.0.0.1).
Reported: training time (run.json's ``wall_s``) and whole-process time per side, MLflow's fixed cost as the
run's log states it (import; opening the store and creating the run), and what the default logger imports of
tracking (``python -X importtime``: rlrun's tracking modules, and whether MLflow or W&B is among them).
Goal: ``wall_s`` of an MLflow side / ``tensorboard``'s <= 1.05 on a run of at least a minute.
Writes the ``tracking`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks.common import PYTHON, ROOT, median, provenance, run_process, table, write_section

GOAL = 1.05
CASE = ["env=gridworld", "algo=ppo", "progress_bar=false"]
SIDES = {
    "tensorboard": [],
    "mlflow local": ["logger=[tensorboard,mlflow]"],
    "mlflow server": ["logger=[tensorboard,mlflow]", "logger.mlflow.tracking_uri={server}"],
}
FIXED = re.compile(r"fixed cost: import ([\d.]+) s, store and run ([\d.]+) s")


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``mlflow server`` on a free port of 127.0.0.1, SQLite backend in ``folder``; its process and URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = [PYTHON, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{folder / 'server.db'}"]
    args += ["--default-artifact-root", str(folder / "artifacts"), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--workers", "1"]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return server, url
        except OSError:
            time.sleep(0.5)
    os.killpg(server.pid, signal.SIGTERM)
    raise RuntimeError("mlflow server did not start")


def default_imports() -> tuple[float, list[str]]:
    """Milliseconds of rlrun.track's modules (cumulative, as ``-X importtime`` counts them) when training is
    imported with the default logger, and the MLflow or W&B modules imported (none expected)."""
    code = "import rlrun.run.training; from rlrun.track.session import Tracking"
    result = subprocess.run([PYTHON, "-X", "importtime", "-c", code], capture_output=True, text=True, cwd=ROOT)
    own: dict[str, int] = {}
    heavy: list[str] = []
    for line in result.stderr.splitlines():
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        name = parts[2]
        if name.startswith("rlrun.track"):
            own[name] = int(parts[0])  # self time, microseconds
        if name.split(".")[0] in ("mlflow", "wandb"):
            heavy.append(name)
    return sum(own.values()) / 1000, heavy


def run(reps: int, steps: int, quick: bool) -> str:
    """Measure every side; the Markdown section."""
    walls: dict[str, list[float]] = {name: [] for name in SIDES}
    trains: dict[str, list[float]] = {name: [] for name in SIDES}
    fixed: dict[str, list[tuple[float, float]]] = {name: [] for name in SIDES}
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-tracking-") as tmp:
        work = Path(tmp)
        (work / "server").mkdir()
        server, url = start_server(work / "server")
        try:
            for rep in range(-1, reps):  # round -1: creates both stores, not counted
                for name, extra in SIDES.items():
                    run_dir = work / "outputs" / "runs" / f"{name.replace(' ', '_')}-{rep}"
                    args = [a.format(server=url) for a in extra]
                    budget = steps if rep >= 0 else 2_048
                    cmd = [PYTHON, "-m", "rlrun", *CASE, f"total_timesteps={budget}", *args, f"hydra.run.dir={run_dir}"]
                    proc = run_process(cmd, work / "logs" / f"{run_dir.name}.log", cwd=work)
                    if rep < 0:
                        continue
                    walls[name].append(proc.wall_s)
                    trains[name].append(json.loads((run_dir / "run.json").read_text())["wall_s"])
                    if found := FIXED.search((run_dir / "rlrun.log").read_text()):
                        fixed[name].append((float(found[1]), float(found[2])))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()
    base = median(trains["tensorboard"])
    rows = []
    for name in SIDES:
        ratio = median(trains[name]) / base
        # the same round's runs ran under the same load: the median of their ratios is the steadier figure
        paired = median([own / tb for own, tb in zip(trains[name], trains["tensorboard"], strict=True)])
        verdict = "" if name == "tensorboard" else ("met" if max(ratio, paired) <= GOAL else "NOT met")
        imported = f"{median([f[0] for f in fixed[name]]):.2f}" if fixed[name] else "–"
        opened = f"{median([f[1] for f in fixed[name]]):.2f}" if fixed[name] else "–"
        rounds = " ".join(f"{value:.1f}" for value in trains[name])
        row = [
            name,
            f"{median(trains[name]):.2f}",
            rounds,
            f"{ratio:.3f}",
            f"{paired:.3f}",
            f"{median(walls[name]):.2f}",
        ]
        rows.append([*row, imported, opened, verdict])
    track_ms, heavy = default_imports()
    body = [
        "## Tracking: MLflow's cost, and none with the default logger",
        "",
        f"gridworld + PPO (its preset), {steps:,} steps, seed 0. `wall_s`: run.json's training time; process: "
        "the whole command. MLflow's fixed cost as the run's log states it: importing MLflow, then opening the "
        "store and creating the run, in the tracking thread before training starts (so they add to the process, "
        f"not to `wall_s`). Ratio: of the medians; per round: the median of each round's ratio (the runs of a round "
        f"ran under the same load). Goal: both <= {GOAL} on a run of at least a minute.",
        "",
        table(
            [
                "logger",
                "wall_s",
                "each round",
                "ratio",
                "ratio per round",
                "process s",
                "import s",
                "store+run s",
                "goal",
            ],
            rows,
        ),
        "",
        f"With the default logger, `import rlrun.run.training` imports rlrun's tracking modules in {track_ms:.1f} ms "
        f"(`python -X importtime`, their own time) and {', '.join(heavy) or 'no module of MLflow or W&B'} "
        "(also asserted by tests/rlrun/track/test_loggers.py).",
        "",
        provenance(
            f"nice python -m benchmarks.speed.tracking --reps {reps} --steps {steps}{' --quick' if quick else ''}", reps
        ),
    ]
    if quick:
        body.insert(
            2, "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goal is about).**\n"
        )
    return "\n".join(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--steps", type=int, default=600_000, help="a minute or more of training here")
    parser.add_argument("--quick", action="store_true", help="2,048 steps, 1 repetition: proves it works")
    args = parser.parse_args()
    reps, steps = (1, 2_048) if args.quick else (args.reps, args.steps)
    section = run(reps, steps, args.quick)
    if not args.quick:  # a quick run only shows that the benchmark works
        write_section("tracking", section)
    print(section)


if __name__ == "__main__":
    main()
