"""Start-up against RL Baselines3 Zoo: seconds from before the process starts to its first env step.

CartPole-v1 PPO with the Zoo's hyperparameters on both sides; ``benchmarks/speed/first_step.py`` runs
``python -m rlrun`` and ``python -m rl_zoo3.train`` alike and ends the process at the first env step. The Zoo runs
in its own virtualenv (``benchmarks.common.ensure_zoo``). Goal: rlrun no slower than the Zoo.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    PYTHON,
    ROOT,
    ZOO_PACKAGES,
    ZOO_PYTHON,
    ensure_zoo,
    median,
    provenance,
    run_process,
    table,
    versions,
    zoo_config,
)

FIRST_STEP = str(ROOT / "benchmarks" / "speed" / "first_step.py")
NOTE = (
    "Both sides import torch and SB3 and build the same model. rlrun pauses garbage collection while it starts "
    "(`rlrun/startup/gc_pause.py`: Python's collector would otherwise walk torch's freshly imported objects several "
    "times); its other start-up measure, the fork server's preloads, acts only in joblib sweeps (see \"What each "
    'start-up measure buys" below). rlrun also imports Hydra, composes the config, runs its checks (on the envs and '
    "model it trains with, built once), writes run.json and config.yaml (the git commit is read from `.git`, no "
    "subprocess) and builds its evaluation copies."
)


def _first_step(cmd: list[str], stamp: Path, log: Path) -> tuple[float, float]:
    """Wall seconds to the first env step, and the CPU seconds the process spent until it ended there."""
    stamp.unlink(missing_ok=True)
    started = time.time()
    proc = run_process(cmd, log)
    return float(stamp.read_text()) - started, proc.cpu_s


def measure(reps: int, work: Path) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds to the first env step of each side, ``reps`` times alternating, after a warm-up that is
    not kept."""
    stamp = work / "first-step"
    times: dict[str, list[tuple[float, float]]] = {"zoo": [], "rlrun": []}
    for rep in range(-1, reps):  # rep -1: the warm-up (a fresh virtualenv compiles its bytecode on first use)
        zoo = [str(ZOO_PYTHON), FIRST_STEP, str(stamp), "rl_zoo3.train", "--algo", "ppo", "--env", "CartPole-v1"]
        zoo += ["--seed", "0", "-f", str(work / f"zoo-start-{rep}")]
        times["zoo"].append(_first_step(zoo, stamp, work / "logs" / f"start-zoo-{rep}.log"))
        rlrun = [PYTHON, FIRST_STEP, str(stamp), "rlrun", *zoo_config("cartpole", "ppo"), "progress_bar=false"]
        rlrun += [f"hydra.run.dir={work / f'rlrun-start-{rep}'}"]
        times["rlrun"].append(_first_step(rlrun, stamp, work / "logs" / f"start-rlrun-{rep}.log"))
    return {name: values[1:] for name, values in times.items()}


def rows(times: dict[str, list[tuple[float, float]]]) -> list[list[str]]:
    """One row per side: median wall seconds, their range, the ratio to the Zoo, the goal; the same in CPU seconds."""
    zoo_s = median([wall for wall, _ in times["zoo"]])
    zoo_cpu = median([cpu for _, cpu in times["zoo"]])
    out = []
    for name, values in times.items():
        walls, cpus = [wall for wall, _ in values], [cpu for _, cpu in values]
        ratio = median(walls) / zoo_s
        verdict = "" if name == "zoo" else f"<= 1.0: {'met' if ratio <= 1.0 else 'NOT met'}"
        spread = f"{min(walls):.2f}-{max(walls):.2f}"
        cpu = f"{median(cpus):.2f}"
        out.append(
            [name, f"{median(walls):.2f}", spread, f"{ratio:.3f}", verdict, cpu, f"{median(cpus) / zoo_cpu:.3f}"]
        )
    return out


def run(reps: int, quick: bool) -> str:
    """Measure both sides; the Markdown section."""
    ensure_zoo()
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        times = measure(reps, Path(tmp))
    held = (
        f"The figures hold for rlrun with {versions(packages=('torch', 'stable-baselines3'))} and the Zoo with "
        f"{versions(str(ZOO_PYTHON), ('torch', 'stable-baselines3'))}; another torch or SB3 version starts in "
        "another time (rerun the command there)."
    )
    return "\n".join(
        [
            "## Start-up: process start to the first training step",
            "",
            "CartPole-v1 PPO with the Zoo's hyperparameters; the clock starts before the process is started and "
            "stops at the first env step (`benchmarks/speed/first_step.py` runs `python -m rlrun` and "
            "`python -m rl_zoo3.train` alike and ends the process there). Goal: rlrun no slower than the Zoo. CPU "
            "seconds (the process's, to its end at the first step) are the steadier figure on a loaded machine.",
            "",
            table(["side", "median s", "range s", "ratio to zoo", "goal", "cpu s", "cpu ratio"], rows(times)),
            "",
            NOTE,
            "",
            held,
            "",
            provenance(f"python -m benchmarks --only startup{' --quick' if quick else ''} --reps {reps}", reps),
            f"The Zoo's environment: {versions(str(ZOO_PYTHON), ZOO_PACKAGES)}.",
        ]
    )
