"""What every benchmark of the suite shares: whole-process timing, medians, the machine, BENCHMARKS.md sections."""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
PYTHON = sys.executable
ZOO_VENV = ROOT / "benchmarks" / ".zoo-venv"
ZOO_PYTHON = ZOO_VENV / "bin" / "python"
PACKAGES = ("stable-baselines3", "gymnasium", "torch", "hydra-core", "numpy")


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


def run_process(cmd: Sequence[str], log: Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Proc:
    """Run ``cmd`` to its end (output to ``log``); CPU seconds and peak RSS are ``wait4``'s for the command
    (its children included), taken by a small launcher so that this process's own memory is not counted."""
    log.parent.mkdir(parents=True, exist_ok=True)
    report = log.with_suffix(".usage")
    with open(log, "w") as out:
        started = time.perf_counter()
        process = subprocess.run(
            [PYTHON, "-S", "-c", _LAUNCHER, str(report), *cmd], stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env
        )
        wall = time.perf_counter() - started
    if process.returncode != 0:
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


def machine() -> str:
    """CPU model, core count, load at the start, OS and Python: what a reader needs to weigh the figures."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = re.findall(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = names[0] if names else cpu
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    system = f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    return f"{cpu}, {os.cpu_count()} cores (load {load} at the start), {system}"


def write_section(name: str, body: str, path: Path = BENCHMARKS_MD) -> None:
    """Rewrite the section ``name`` of BENCHMARKS.md (between its markers); other sections stay as they are."""
    begin, end = f"<!-- rlrun:begin {name} -->", f"<!-- rlrun:end {name} -->"
    block = f"{begin}\n{body.strip()}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), flags=re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + f"\n\n{block}\n"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(
    command: str, reps: int, extra: str = "", how: str = "the sides alternating, whole processes timed"
) -> str:
    """The footer every section carries: the command, repetitions, machine and versions."""
    lines = [
        f"Command: `{command}`; medians of {reps} repetitions, {how}.",
        f"Machine: {machine()}.",
        f"rlrun's environment: {versions()}.",
    ]
    if extra:
        lines.append(extra)
    return "\n".join(lines)
