"""Benchmarks 2 and 3: rlrun against RL Baselines3 Zoo, whole runs pair by pair and start-up, in one invocation.

The Zoo is installed by the benchmark into its own virtualenv, ``benchmarks/.zoo-venv`` (git-ignored; torch
first, pinned to the project's CPU build, so pip does not pull a CUDA one, then the env packages of the pairs),
never into rlrun's. Whole runs: the pairs of ``benchmarks/zoo_pairs.py`` at the Zoo's hyperparameters and budgets,
three sides (the Zoo by default, the Zoo at one torch thread, rlrun by default), three ratios; and the user-level
figure (``--user-level``). Start-up: seconds from before the process starts to its first env step
(benchmarks/first_step.py).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks import zoo_pairs
from benchmarks.common import (
    PYTHON,
    ROOT,
    ZOO_PYTHON,
    ZOO_VENV,
    median,
    provenance,
    run_process,
    table,
    versions,
)

# The env packages of the pairs, at the versions rlrun's extras install here (MiniGrid, Box2D).
ZOO_ENV_PACKAGES = ("minigrid==3.2.0", "box2d==2.3.10", "pygame-ce==2.5.8")
FIRST_STEP = str(ROOT / "benchmarks" / "first_step.py")
# What each side's environment holds in memory before training: the peak RSS of a process that only imports.
IMPORTS = {
    "zoo": ("import rl_zoo3.train", "the Zoo's `rl_zoo3.train`"),
    "sb3 (zoo's env)": ("import stable_baselines3", "`stable_baselines3` in the Zoo's environment (no tensorboard)"),
    "sb3 (rlrun's env)": ("import stable_baselines3", "`stable_baselines3` in rlrun's (with tensorboard)"),
    "rlrun": ("import rlrun.run.training, rlrun.cli.main", "rlrun's training modules, Hydra included"),
}
STARTUP_NOTE = (
    "Both sides import torch and SB3. The Zoo also imports `torch._dynamo`, which torch's optimizers import as the "
    "model is built; rlrun keeps it out (`rlrun/startup/lazy_dynamo.py`) and pauses garbage collection while it starts "
    "(`rlrun/startup/gc_pause.py`). rlrun also imports Hydra, composes the config, runs its checks (on the envs "
    "and model it trains with, built once), writes run.json and config.yaml (the git commit is read from `.git`, "
    "no subprocess) and builds its evaluation copies."
)


def import_peaks(work: Path) -> dict[str, float]:
    """Peak RSS (MB) of a process that only imports, in each side's environment (see ``IMPORTS``)."""
    peaks = {}
    for name, (code, _) in IMPORTS.items():
        python = str(ZOO_PYTHON) if "zoo" in name else PYTHON
        peaks[name] = run_process([python, "-c", code], work / "logs" / f"import-{name}.log".replace(" ", "_")).peak_mb
    return peaks


def memory_note(peaks: dict[str, float]) -> str:
    """Where peak memory comes from, in figures measured by this run."""
    measured = "; ".join(f"{IMPORTS[name][1]} {peak:.0f} MB" for name, peak in peaks.items())
    return (
        f"Peak memory of a process that only imports: {measured}. The rest of a run's peak is training: the model, "
        "the env copies, the rollout or replay buffer, and on rlrun's side the snapshots it writes."
    )


def ensure_zoo() -> None:
    """Create ``benchmarks/.zoo-venv`` with rl_zoo3 unless it is there (torch==2.13.0 first: the CPU build)."""
    if ZOO_PYTHON.exists():
        return
    subprocess.run([PYTHON, "-m", "venv", str(ZOO_VENV)], check=True)
    pip = [str(ZOO_PYTHON), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)
    subprocess.run([*pip, "rl_zoo3"], check=True)
    subprocess.run([*pip, *ZOO_ENV_PACKAGES], check=True)


def zoo_config(env: str, algo: str) -> list[str]:
    """rlrun's overrides for the Zoo's hyperparameters and budget (``conf/benchmark/zoo/``), not rlrun's preset."""
    return [f"env={env}", f"algo={algo}", "~tuned", f"+benchmark/zoo={env}_{algo}"]


def _startup(cmd: list[str], stamp: Path, log: Path) -> float:
    stamp.unlink(missing_ok=True)
    started = time.time()
    run_process(cmd, log)
    return float(stamp.read_text()) - started


def startup(reps: int, work: Path) -> list[list[str]]:
    """Benchmark 3's rows: CartPole-v1 PPO, process start to the first env step (after a discarded warm-up)."""
    stamp = work / "first-step"
    times: dict[str, list[float]] = {"zoo": [], "rlrun": []}
    for rep in range(-1, reps):  # rep -1: the warm-up (a fresh virtualenv compiles its bytecode on first use)
        zoo = [str(ZOO_PYTHON), FIRST_STEP, str(stamp), "rl_zoo3.train", "--algo", "ppo", "--env", "CartPole-v1"]
        zoo += ["--seed", "0", "-f", str(work / f"zoo-start-{rep}")]
        times["zoo"].append(_startup(zoo, stamp, work / "logs" / f"start-zoo-{rep}.log"))
        rlrun = [PYTHON, FIRST_STEP, str(stamp), "rlrun", *zoo_config("cartpole", "ppo"), "progress_bar=false"]
        rlrun += [f"hydra.run.dir={work / f'rlrun-start-{rep}'}"]
        times["rlrun"].append(_startup(rlrun, stamp, work / "logs" / f"start-rlrun-{rep}.log"))
    times = {name: values[1:] for name, values in times.items()}
    zoo_s = median(times["zoo"])
    rows = []
    for name, values in times.items():
        ratio = median(values) / zoo_s
        verdict = "" if name == "zoo" else f"<= 1.0: {'met' if ratio <= 1.0 else 'NOT met'}"
        spread = f"{min(values):.2f}-{max(values):.2f}"
        rows.append([name, f"{median(values):.2f}", spread, f"{ratio:.3f}", verdict])
    return rows


def _zoo_section(results: dict[str, dict], figure: dict | None, peaks: dict[str, float], quick: bool) -> str:
    command = "python -m benchmarks --only zoo --pairs NAME... --reps N [--user-level]"
    return "\n".join(
        [
            "## RL Zoo: the same training, whole runs, pair by pair",
            "",
            "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goals are about).**"
            if quick
            else "",
            "The Zoo's hyperparameters and budgets on both sides: `python -m rl_zoo3.train --algo A --env E --seed 0`"
            " as the Zoo runs by default (torch's default threads, evaluation every 25,000 steps on 5 episodes,"
            " no checkpoints), the same with `--num-threads 1`, and `rlrun env=E algo=A` as rlrun runs by default"
            " (its preset is the Zoo's values; `~tuned +benchmark/zoo=<pair>` where rlrun's own preset is tuned"
            " for wall time; one torch thread, evaluation every 10,000 steps on 10 episodes, a 50-episode final"
            " evaluation, snapshots every 10,000 steps). Whole processes, the sides alternating, medians."
            " Ratios are rlrun's: wall time over the Zoo's default (`default`; its goal <= 1.0 applies where the"
            f" Zoo's default runs on one core, i.e. at most {zoo_pairs.ONE_CORE} CPU seconds per wall second; the"
            " Zoo's cores are in brackets), wall time over the Zoo's at one thread (`equal threads`, goal <= 0.95)"
            " and CPU seconds over the Zoo's default (`per CPU-second`, goal <= 0.7). `rlrun at zoo eval`: rlrun"
            f" with `{' '.join(zoo_pairs.ZOO_EVAL)}`, the Zoo's evaluation work, its wall time and its ratio to the"
            " Zoo's at one thread (measured for the pairs where it tells the cost of rlrun's evaluations).",
            "",
            table(zoo_pairs.HEADER, zoo_pairs.rows(results)),
            "",
            *(zoo_pairs.user_level_lines(figure) if figure else ["User level: not measured by this run."]),
            "",
            memory_note(peaks),
            "",
            "Each invocation measures the pairs named and keeps them in `benchmarks/zoo_pairs.json`; the table is"
            " written from all kept pairs (the reps and date of each in its last column).",
            provenance(command, max((r["reps"] for r in results.values()), default=0)),
            "The Zoo's environment: "
            f"{versions(str(ZOO_PYTHON), ('rl_zoo3', 'stable-baselines3', 'gymnasium', 'torch', 'minigrid'))}.",
        ]
    )


def run(
    reps: int, quick: bool, only: set[str], pairs: list[str] | None = None, user_level: bool = False
) -> dict[str, str]:
    """The sections ``zoo`` and ``startup`` (those in ``only``); ``pairs``: the Zoo pairs to measure now."""
    ensure_zoo()
    sections = {}
    zoo_versions = (
        f"The Zoo's environment: {versions(str(ZOO_PYTHON), ('rl_zoo3', 'stable-baselines3', 'gymnasium', 'torch'))}."
    )
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        start_rows = startup(reps, work)  # also the warm-up of both virtualenvs before the whole runs
        if "zoo" in only:
            names = list(zoo_pairs.PAIRS) if pairs is None else pairs
            results = zoo_pairs.measure_pairs(names, reps, quick, work)
            figure = zoo_pairs.user_level(work, quick) if user_level else None
            kept = zoo_pairs.CACHE.with_name("zoo_user_level.json")
            if figure is not None and not quick:
                kept.write_text(json.dumps(figure, indent=1, sort_keys=True) + "\n")
            elif figure is None and kept.exists() and not quick:
                figure = json.loads(kept.read_text())
            sections["zoo"] = _zoo_section(results, figure, import_peaks(work), quick)
        if "startup" in only:
            rows = start_rows
            sections["startup"] = "\n".join(
                [
                    "## Start-up: process start to the first training step",
                    "",
                    "CartPole-v1 PPO with the Zoo's hyperparameters; the clock starts before the process is started "
                    "and "
                    "stops at the first env step (`benchmarks/first_step.py` runs `python -m rlrun` and "
                    "`python -m rl_zoo3.train` alike and ends the process there). Goal: rlrun no slower than the Zoo.",
                    "",
                    table(["side", "median s", "range s", "ratio to zoo", "goal"], rows),
                    "",
                    STARTUP_NOTE,
                    "",
                    provenance(f"python -m benchmarks --only startup --reps {reps}", reps),
                    zoo_versions,
                ]
            )
    return sections
