"""Run folders for tables: find them under any folders, read them, group the runs that differ only by seed.

A run folder holds ``run.json`` and ``config.yaml`` (DESIGN.md, "The run-directory contract"), at any depth:
single runs, sweeps, several sweeps at once. A run whose record cannot be read (a truncated or hand-edited
``run.json``, a completed run without ``eval.csv``) is left out with one warning line naming it; the others
still make a table.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlrun.config.errors import UserError
from rlrun.config.upgrade import upgrade_container
from rlrun.record.files import ATTEMPTS, parse_eval_csv
from rlrun.record.run_record import RUN_STATUSES

log = logging.getLogger("rlrun.table")

MISSING = object()  # a dotted key absent from a config


class Damaged(Exception):
    """A run folder whose record cannot be used; the message says why."""


@dataclass(frozen=True)
class Curve:
    """The periodic evaluations of a run (``eval.csv``), in order of env steps."""

    timesteps: tuple[int, ...]
    mean_return: tuple[float, ...]
    success_rate: tuple[float | None, ...]


@dataclass
class Run:
    """One run folder: its ``run.json``, its ``config.yaml`` and its evaluation curve."""

    folder: Path
    record: dict[str, Any]
    config: dict[str, Any]
    curve: Curve | None

    @property
    def env(self) -> str:
        return str(self.record.get("env") or self.record["env_id"])

    @property
    def algo(self) -> str:
        return str(self.record.get("algo") or self.config["algo"]["_target_"].rsplit(".", 1)[-1].lower())

    @property
    def completed(self) -> bool:
        return self.record["status"] == "completed"

    def score(self, metric: str) -> float | None:
        """The run's final ``mean_return`` (``metric="return"``) or ``success_rate``; None if not completed."""
        if not self.completed:
            return None
        value = self.record["final"]["mean_return" if metric == "return" else "success_rate"]
        return None if value is None else float(value)

    def value(self, key: str) -> Any:
        """The value of a dotted key in the run's ``config.yaml`` (``MISSING`` when absent)."""
        node: Any = self.config
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return MISSING
            node = node[part]
        return node


@dataclass
class Group:
    """Runs that differ only by seed; ``overrides`` are the ones that set it apart, ``name`` is its label."""

    env: str
    env_id: str
    algo: str
    total_timesteps: int
    runs: list[Run]
    overrides: list[str] = field(default_factory=list)
    name: str = ""
    planned: int = 0

    @property
    def completed(self) -> list[Run]:
        return [run for run in self.runs if run.completed]


def find_runs(folders: Sequence[Path]) -> list[Run]:
    """Every readable run under ``folders`` (each must hold at least one run folder)."""
    runs: dict[Path, Run] = {}
    for folder in folders:
        if not folder.is_dir():
            raise UserError(f"{folder}: no such folder", "give a run folder, a sweep folder or a folder holding them")
        found = sorted(_run_folders(folder))
        if not found:
            raise UserError(
                f"{folder}: no runs found (a run folder holds run.json and config.yaml)",
                "give a folder under outputs/runs/ or outputs/sweeps/ that holds finished or started runs",
            )
        for run_dir in found:
            key = run_dir.resolve()
            if key in runs:
                continue
            try:
                runs[key] = read_run(run_dir)
            except Damaged as problem:
                log.warning("leaving out %s: %s", run_dir, problem)
    return sorted(runs.values(), key=lambda run: str(run.folder.resolve()))


def _run_folders(folder: Path) -> Iterator[Path]:
    """Run folders at any depth; a run folder's own subfolders (snapshots) are not searched, nor a sweep
    job's ``attempts/`` (failed attempts the job was run again after, DESIGN.md "Sweeps")."""
    for root, dirs, files in os.walk(folder):
        if "run.json" in files and "config.yaml" in files:
            dirs.clear()
            yield Path(root)
        else:
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != ATTEMPTS)


def read_run(folder: Path) -> Run:
    """Read one run folder; raises :class:`Damaged` with the reason when it cannot be used."""
    try:
        record = json.loads((folder / "run.json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Damaged(f"run.json cannot be read ({error})") from None
    _check_record(record)
    try:
        config = yaml.safe_load((folder / "config.yaml").read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise Damaged(f"config.yaml cannot be read ({type(error).__name__})") from None
    if not isinstance(config, dict):
        raise Damaged("config.yaml holds no mapping")
    config = upgrade_container(config)  # a run written by an older rlrun, in today's spelling
    curve_path = folder / "eval.csv"
    if record["status"] == "completed" and not curve_path.is_file():
        raise Damaged("no eval.csv although run.json says completed")
    return Run(folder, record, config, read_curve(curve_path) if curve_path.is_file() else None)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_record(record: Any) -> None:
    """The fields a table needs, with the types DESIGN.md gives them."""
    if not isinstance(record, dict):
        raise Damaged("run.json holds no object")
    expected = {"env_id": str, "config_hash": str, "seed": int, "total_timesteps": int, "overrides": list}
    for key, kind in expected.items():
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            raise Damaged(f"run.json has no valid {key!r}")
    if record.get("status") not in RUN_STATUSES:
        raise Damaged(f"run.json has status {record.get('status')!r}, not one of {', '.join(RUN_STATUSES)}")
    for key in ("wall_s", "fps"):
        if record.get(key) is not None and not _is_number(record[key]):
            raise Damaged(f"run.json has a non-numeric {key!r}")
    if record["status"] != "completed":
        return
    final = record.get("final")
    if not isinstance(final, dict) or not _is_number(final.get("mean_return")):
        raise Damaged("run.json says completed but has no final mean_return")
    if final.get("success_rate") is not None and not _is_number(final["success_rate"]):
        raise Damaged("run.json has a non-numeric final success_rate")


def read_curve(path: Path) -> Curve:
    """``eval.csv`` as columns, sorted by env steps; raises :class:`Damaged` when it cannot be parsed."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise Damaged(f"eval.csv cannot be parsed ({error})") from None
    try:
        rows = sorted((row.timesteps, row.mean_return, row.success_rate) for row in parse_eval_csv(text))
    except ValueError as error:
        raise Damaged(str(error)) from None
    return Curve(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows))
