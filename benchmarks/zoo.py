"""Benchmarks 2 and 3: rlrun against RL Baselines3 Zoo, whole runs and start-up, both sides in one invocation.

The Zoo is installed by the benchmark into its own virtualenv, ``benchmarks/.zoo-venv`` (git-ignored; torch
first, pinned to the project's CPU build, so pip does not pull a CUDA one), never into rlrun's. Runs:
CartPole-v1 PPO (1e5 steps) and Pendulum-v1 SAC (2e4 steps) with the Zoo's hyperparameters on both sides
(rlrun takes them from ``conf/benchmark/zoo/``: ``~tuned +benchmark/zoo=<env>_<algo>``; its own presets are tuned
for wall time instead). Sides: the Zoo with its defaults (evaluation every 25,000 steps, 5 episodes,
one eval env, no checkpoints), rlrun with its defaults (that file's evaluations and the 50-episode final
one, snapshots), and rlrun at the Zoo's evaluation settings with a one-episode final evaluation.
Start-up: seconds from before the process starts to its first env step (benchmarks/first_step.py).
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

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

CASES = {
    "CartPole-v1 PPO": (("cartpole", "ppo"), ("ppo", "CartPole-v1"), 100_000),
    "Pendulum-v1 SAC": (("pendulum", "sac"), ("sac", "Pendulum-v1"), 20_000),
}
QUICK = {"CartPole-v1 PPO": 2_048, "Pendulum-v1 SAC": 300}
ZOO_EVAL = ["eval.every=25000", "eval.episodes=5", "eval.n_envs=5", "eval.final_episodes=1"]
FIRST_STEP = str(ROOT / "benchmarks" / "first_step.py")
# What each side's environment holds in memory before training: the peak RSS of a process that only imports.
IMPORTS = {
    "zoo": ("import rl_zoo3.train", "the Zoo's `rl_zoo3.train`"),
    "sb3 (zoo's env)": ("import stable_baselines3", "`stable_baselines3` in the Zoo's environment (no tensorboard)"),
    "sb3 (rlrun's env)": ("import stable_baselines3", "`stable_baselines3` in rlrun's (with tensorboard)"),
    "rlrun": ("import rlrun.run.train, rlrun.cli.main", "rlrun's training modules, Hydra included"),
}
STARTUP_NOTE = (
    "Both sides import torch and SB3. The Zoo also imports `torch._dynamo`, which torch's optimizers import as the "
    "model is built; rlrun keeps it out (`rlrun/process/lazy_dynamo.py`) and pauses garbage collection while it starts "
    "(`rlrun/process/gc_pause.py`). rlrun also imports Hydra, composes the config, runs its checks (on the envs "
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


def zoo_config(env: str, algo: str) -> list[str]:
    """rlrun's overrides for the Zoo's hyperparameters and budget (``conf/benchmark/zoo/``), not rlrun's preset."""
    return [f"env={env}", f"algo={algo}", "~tuned", f"+benchmark/zoo={env}_{algo}"]


def _sides(case: str, steps: int, work: Path, rep: int) -> dict[str, list[str]]:
    (env, algo), (zoo_algo, zoo_env), _ = CASES[case]
    tag = f"{env}-{algo}-{rep}"
    rlrun = [PYTHON, "-m", "rlrun", *zoo_config(env, algo), f"total_timesteps={steps}", "progress_bar=false"]
    return {
        "zoo defaults": [str(ZOO_PYTHON), "-m", "rl_zoo3.train", "--algo", zoo_algo, "--env", zoo_env]
        + ["-n", str(steps), "--seed", "0", "-f", str(work / f"zoo-{tag}")],
        "rlrun defaults": rlrun + [f"hydra.run.dir={work / f'rlrun-{tag}'}"],
        "rlrun at zoo eval": rlrun + ZOO_EVAL + [f"hydra.run.dir={work / f'rlrun-zoo-eval-{tag}'}"],
    }


def whole_runs(reps: int, quick: bool, work: Path) -> list[list[str]]:
    """Benchmark 2's rows."""
    rows = []
    for case, (_, _, full_steps) in CASES.items():
        steps = QUICK[case] if quick else full_steps
        walls: dict[str, list[float]] = {}
        peaks: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        for rep in range(reps):
            for name, cmd in _sides(case, steps, work, rep).items():
                proc = run_process(cmd, work / "logs" / f"{case}-{name}-{rep}.log".replace(" ", "_"))
                walls.setdefault(name, []).append(proc.wall_s)
                peaks.setdefault(name, []).append(proc.peak_mb)
                cpus.setdefault(name, []).append(proc.cpu_s)
        zoo = median(walls["zoo defaults"])
        goals = {"rlrun defaults": 1.0, "rlrun at zoo eval": 0.9}
        for name in walls:
            ratio = median(walls[name]) / zoo
            goal = goals.get(name)
            verdict = "" if goal is None else f"<= {goal}: {'met' if ratio <= goal else 'NOT met'}"
            peak = median(peaks[name])
            rows.append(
                [case, f"{steps:,}", name, f"{median(walls[name]):.2f}", f"{ratio:.3f}", verdict]
                + [
                    f"{median(cpus[name]):.2f}",
                    f"{median(cpus[name]) / median(cpus['zoo defaults']):.3f}",
                    f"{peak:.0f}",
                ]
            )
    return rows


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


def run(reps: int, quick: bool, only: set[str]) -> dict[str, str]:
    """The sections ``zoo`` and ``startup`` (those in ``only``)."""
    ensure_zoo()
    sections = {}
    zoo_versions = (
        f"The Zoo's environment: {versions(str(ZOO_PYTHON), ('rl_zoo3', 'stable-baselines3', 'gymnasium', 'torch'))}."
    )
    quick_note = "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goals are about).**\n\n"
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        if "startup" in only or "zoo" in only:
            start_rows = startup(reps, work)  # also the warm-up of both virtualenvs before the whole runs
        if "zoo" in only:
            rows = whole_runs(reps, quick, work)
            peaks = import_peaks(work)
            sections["zoo"] = "\n".join(
                [
                    "## RL Zoo: the same training, whole runs",
                    "",
                    quick_note if quick else "",
                    "The Zoo's hyperparameters on both sides (`rl_zoo3.train --algo A --env E -n N --seed 0`; rlrun "
                    "with `~tuned +benchmark/zoo=<env>_<algo>`, the same values). `zoo defaults`: evaluation every "
                    "25,000 steps, 5 episodes, 1 eval env, no checkpoints, torch's default threads. `rlrun defaults`: "
                    "that file's evaluations, the 50-episode "
                    "final evaluation (on 10 copies), snapshots every 10,000 steps, 1 torch thread. "
                    f"`rlrun at zoo eval`: `{' '.join(ZOO_EVAL)}`. Goals: defaults <= 1.0, at zoo eval <= 0.9, "
                    "peak memory (largest process, `wait4`) no more than the Zoo's.",
                    "",
                    table(["case", "steps", "side", "wall s", "ratio", "goal", "cpu s", "cpu ratio", "peak MB"], rows),
                    "",
                    memory_note(peaks),
                    "",
                    provenance(f"python -m benchmarks --only zoo{' --quick' if quick else ''} --reps {reps}", reps),
                    zoo_versions,
                ]
            )
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
