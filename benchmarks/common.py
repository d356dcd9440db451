"""What the benchmarks share: whole-process timing, medians, the machine, versions, BENCHMARKS.md sections, the
RL Zoo's virtualenv and configs, the verified presets' pairs, rlrun's configs composed and its tiniest whole run
(which the tests use too)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omegaconf import DictConfig

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
PYTHON = sys.executable
RESULTS = ROOT / "benchmarks" / "results"  # every benchmark's kept files, one folder per benchmark
ZOO_VENV = ROOT / "benchmarks" / ".zoo-venv"
ZOO_PYTHON = ZOO_VENV / "bin" / "python"
PACKAGES = ("stable-baselines3", "gymnasium", "torch", "hydra-core", "numpy")
ZOO_PACKAGES = ("rl_zoo3", "stable-baselines3", "gymnasium", "torch")
# The Zoo's virtualenv: torch first, pinned to the project's CPU build (so pip does not pull a CUDA one), then
# rl_zoo3, then the env packages of the Zoo pairs at the versions rlrun's extras install here (MiniGrid, Box2D, and
# MuJoCo for zoo_jax's HalfCheetah).
ZOO_INSTALL = (
    ("torch==2.13.0",),
    ("rl_zoo3==2.9.2",),
    ("minigrid==3.2.0", "box2d==2.3.10", "pygame-ce==2.5.8", "mujoco==3.11.0"),
)
# A whole `python -m rlrun` run in about a second: PPO on GridWorld, two evaluations, two final episodes.
TINY_RUN = [
    "env=gridworld",
    "algo=ppo",
    "total_timesteps=256",
    "algo.n_steps=32",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "progress_bar=false",
]


@dataclass
class Proc:
    """One whole process: wall seconds from before it started until it ended, CPU seconds (user + system, its
    children included: the steadier figure on a shared machine) and its peak resident memory."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    returncode: int


# Started by run_process in a fresh, small interpreter, which forks the measured command and waits for it.
# Linux keeps a process's peak RSS across exec, and a child that the benchmark's own (large) process spawns
# directly starts with that process's memory counted in; a child of this small launcher does not.
_LAUNCHER = """
import os, sys
report, command = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(command[0], command)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write(f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_process(
    cmd: Sequence[str], log: Path, cwd: Path = ROOT, env: dict[str, str] | None = None, check: bool = True
) -> Proc:
    """Run ``cmd`` to its end (output to ``log``); CPU seconds and peak RSS are ``wait4``'s for the command
    (its children included), taken by a small launcher so that this process's own memory is not counted. A
    status other than 0 raises, unless ``check`` is false (a command timed to its refusal)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    report = log.with_suffix(".usage")
    with open(log, "w") as out:
        started = time.perf_counter()
        process = subprocess.run(
            [PYTHON, "-S", "-c", _LAUNCHER, str(report), *cmd], stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env
        )
        wall = time.perf_counter() - started
    if check and process.returncode != 0:
        tail = log.read_text()[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} failed with status {process.returncode}:\n{tail}")
    cpu, maxrss_kb = report.read_text().split()
    return Proc(wall, float(cpu), int(maxrss_kb) / 1024, process.returncode)


def median(values: Sequence[float]) -> float:
    """The median (the suite reports medians of alternated repetitions)."""
    return float(statistics.median(values))


def versions(python: str = PYTHON, packages: Sequence[str] = PACKAGES) -> str:
    """``name version`` of the packages as ``python`` sees them (rlrun's or the Zoo's virtualenv)."""
    if python == PYTHON:
        found = []
        for name in packages:
            try:
                found.append(f"{name} {metadata.version(name)}")
            except metadata.PackageNotFoundError:
                found.append(f"{name} -")
        return ", ".join(found)
    code = (
        "from importlib import metadata as m\n"
        f"for n in {list(packages)!r}:\n"
        "    try: print(n, m.version(n))\n"
        "    except m.PackageNotFoundError: print(n, '-')"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    return ", ".join(out.split("\n")[:-1])


def cpu() -> str:
    """The CPU model and core count."""
    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = re.findall(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        name = names[0] if names else name
    return f"{name}, {os.cpu_count()} cores"


def machine() -> str:
    """CPU model, core count, load at the start, OS and Python: what a reader needs to weigh the figures."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    system = f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    return f"{cpu()} (load {load} at the start), {system}"


def write_section(name: str, body: str, path: Path = BENCHMARKS_MD) -> None:
    """Rewrite the section ``name`` of BENCHMARKS.md (between its markers); other sections stay as they are."""
    from rlrun.table import outputs

    outputs.write_section(path, name, body)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(
    command: str,
    reps: int,
    extra: str = "",
    how: str = "the sides alternating, whole processes timed",
    measured_on: str | None = None,
) -> str:
    """The footer every section carries: the command, repetitions, machine and versions. ``measured_on``: the
    :func:`machine` line as it was when the measurement started (default: now)."""
    repeated = f"medians of {reps} repetitions" if reps != 1 else "one repetition"
    lines = [
        f"Command: `{command}`; {repeated}, {how}.",
        f"Machine: {measured_on or machine()}.",
        f"rlrun's environment: {versions()}.",
    ]
    if extra:
        lines.append(extra)
    return "\n".join(lines)


def compose_config(*overrides: str) -> DictConfig:
    """Compose ``conf/config.yaml`` exactly as ``python -m rlrun`` would, with these overrides (Hydra's compose API;
    imported here, so that a benchmark that does not compose does not load Hydra)."""
    from hydra import compose, initialize_config_module

    with initialize_config_module("rlrun.conf", version_base="1.3"):
        return compose("config", overrides=list(overrides))


def pair_of(preset: str) -> tuple[str, str]:
    """``(env, algo)`` of a verified preset, from the preset benchmark's pair file (``conf/benchmark/pair/``)."""
    import yaml

    defaults = yaml.safe_load((ROOT / "conf" / "benchmark" / "pair" / f"{preset}.yaml").read_text())["defaults"]
    chosen = {key.split("/")[-1]: value for entry in defaults for key, value in entry.items()}
    return chosen["env"], chosen["algo"]


def ensure_zoo() -> None:
    """Create ``benchmarks/.zoo-venv`` with rl_zoo3 unless it is there (``ZOO_INSTALL``, in that order)."""
    if ZOO_PYTHON.exists():
        return
    subprocess.run([PYTHON, "-m", "venv", str(ZOO_VENV)], check=True)
    for packages in ZOO_INSTALL:
        subprocess.run([str(ZOO_PYTHON), "-m", "pip", "install", "-q", *packages], check=True)


def zoo_config(env: str, algo: str) -> list[str]:
    """rlrun's overrides for the Zoo's hyperparameters and budget (``conf/benchmark/zoo/``), not rlrun's preset."""
    return [f"env={env}", f"algo={algo}", "~tuned", f"+benchmark/zoo={env}_{algo}"]


def wall_time(sweep: Path) -> str:
    """A sweep's wall time from sweep.json's start and end, when the sweep wrote one."""
    try:
        record = json.loads((sweep / "sweep.json").read_text())
        started, ended = (datetime.datetime.strptime(record[k], "%Y-%m-%dT%H:%M:%S%z") for k in ("started", "ended"))
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown (no readable sweep.json)"
    minutes, seconds = divmod(round((ended - started).total_seconds()), 60)
    took = f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min {seconds:02d} s"
    return f"{took} (sweep.json: {record['started']} to {record['ended']})"
