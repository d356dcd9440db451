"""Run folders for tables: find them under any folders, read them, group the runs that differ only by seed.

A run folder holds ``run.json`` and ``config.yaml`` (DESIGN.md, "The run-directory contract"), at any depth:
single runs, sweeps, several sweeps at once, in folders whose names start with a dot too. A run whose record cannot
be used (a truncated or hand-edited ``run.json``, a field of the wrong type in it or in ``config.yaml``, a completed
run without ``eval.csv``) is left out with one warning line naming it, the file and the field; the others still make
a table. Copies of one run (the same run id, or the same ``run.json``) count once (:func:`distinct`); whether each
record is signed under this user's key is noted (:attr:`Run.unsigned`). Names from a record are shown as text
(:func:`rlrun.record.fields.as_text`).
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

from rlrun.config.errors import UserError
from rlrun.config.keys import ABSENT
from rlrun.config.resolvers import env_name
from rlrun.config.upgrade import upgrade_container
from rlrun.record import reading, signatures
from rlrun.record.fields import as_text, parse_eval_csv, record_problem, shown
from rlrun.record.formats import ATTEMPTS, read_json

log = logging.getLogger("rlrun.table")

MAX_SCORE = 1e100  # an evaluation beyond this is no return: the mean and interval of a few would overflow


def is_score(value: float) -> bool:
    """Whether an evaluation is a score a table can use: finite, within :data:`MAX_SCORE`."""
    return math.isfinite(value) and abs(value) <= MAX_SCORE


class Damaged(Exception):
    """A run folder whose record cannot be used; the message says why."""


@dataclass(frozen=True)
class Curve:
    """The periodic evaluations of a run (``eval.csv``), in order of env steps."""

    timesteps: tuple[int, ...]
    mean_return: tuple[float, ...]
    success_rate: tuple[float | None, ...]

    @property
    def plottable(self) -> bool:
        """Whether every evaluation is a number a curve can draw (:func:`is_score`)."""
        return all(is_score(v) for v in [*self.mean_return, *(s for s in self.success_rate if s is not None)])


@dataclass
class Run:
    """One run folder: its ``run.json``, its ``config.yaml`` and its evaluation curve."""

    folder: Path
    record: dict[str, Any]
    config: dict[str, Any]
    curve: Curve | None
    unsigned: str | None = None  # why run.json is not signed under this user's key (None: it is)
    run_id: str | None = None  # the id its run manifest names, signed or not

    @property
    def env(self) -> str:
        """The env's name in groups and panels: ``run.json``'s ``env``, or for a run whose record names a config
        that takes any id (``gym``, from before runs were named after the id) the id (:func:`env_name`); as text."""
        return as_text(env_name(self.record.get("env") or self.record["env_id"], self.record["env_id"]))

    @property
    def env_id(self) -> str:
        return as_text(self.record["env_id"])

    @property
    def algo(self) -> str:
        return as_text(self.record.get("algo") or self.config["algo"]["_target_"].rsplit(".", 1)[-1].lower())

    @property
    def completed(self) -> bool:
        return self.record["status"] == "completed"

    @property
    def continued(self) -> bool:
        """Whether the run was trained on to a larger budget (``resume= total_timesteps=``): its record lists
        more than one of ``budgets``, and it counts at the last, with the config it has there."""
        budgets = self.record.get("budgets")
        return isinstance(budgets, list) and len(budgets) > 1

    def score(self, metric: str) -> float | None:
        """The run's final ``mean_return`` (``metric="return"``) or ``success_rate``; None if not completed."""
        if not self.completed:
            return None
        value = self.record["final"]["mean_return" if metric == "return" else "success_rate"]
        return None if value is None else float(value)

    def value(self, key: str) -> Any:
        """The value of a dotted key in the run's ``config.yaml`` (:data:`~rlrun.config.keys.ABSENT` when absent)."""
        node: Any = self.config
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return ABSENT
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
    unsigned_plans: list[Path] = field(default_factory=list)  # sweep.json files not signed that add planned seeds

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
                log.warning("leaving out %s: %s", as_text(run_dir), problem)
    return sorted(runs.values(), key=lambda run: str(run.folder.resolve()))


def distinct(runs: Sequence[Run]) -> tuple[list[Run], list[tuple[Run, Run]]]:
    """``runs`` with each run once, and each copy left out with the run it copies: folders whose run manifests
    name the same run id, or whose ``run.json`` are equal, hold one run (copied, or copied and continued). Of
    copies the furthest is kept: a completed one, then the one with the most steps, then the first folder."""

    def furthest(run: Run) -> tuple[Any, ...]:
        return (not run.completed, -(run.record.get("timesteps") or 0), str(run.folder.resolve()))

    kept: dict[str, Run] = {}
    copies = []
    for run in sorted(runs, key=furthest):
        keys = [f"record {json.dumps(run.record, sort_keys=True)}"] + ([f"id {run.run_id}"] if run.run_id else [])
        original = next((kept[key] for key in keys if key in kept), None)
        if original is not None:
            copies.append((run, original))
        for key in keys:
            kept.setdefault(key, original or run)
    unique = {id(run): run for run in kept.values()}.values()
    return sorted(unique, key=lambda run: str(run.folder.resolve())), sorted(copies, key=lambda c: str(c[0].folder))


def _searched(name: str) -> bool:
    """Whether a subfolder may hold runs: not a sweep job's ``attempts/`` (failed attempts the job was run again
    after, DESIGN.md "Sweeps"), Hydra's or git's records, or rlrun's temporary folders. Other folders whose names
    start with a dot (a sweep named so by an older rlrun) are searched like any other."""
    return name not in (ATTEMPTS, ".hydra", ".git") and not name.startswith(".tmp-")


def _run_folders(folder: Path) -> Iterator[Path]:
    """Run folders at any depth; a run folder's own subfolders (snapshots) are not searched (:func:`_searched`)."""
    for root, dirs, files in os.walk(folder):
        if "run.json" in files and "config.yaml" in files:
            dirs.clear()
            yield Path(root)
        else:
            dirs[:] = sorted(d for d in dirs if _searched(d))


def read_run(folder: Path) -> Run:
    """Read one run folder; raises :class:`Damaged` with the reason when it cannot be used."""
    try:
        record = reading.load_json(folder / "run.json")
    except (OSError, ValueError) as error:  # within bounds (rlrun.record.reading), or damaged
        raise Damaged(f"run.json cannot be read ({error})") from None
    _check_record(record)
    try:
        config = reading.load_yaml(folder / "config.yaml")
    except (OSError, ValueError) as error:
        raise Damaged(f"config.yaml cannot be read ({error})") from None
    config = upgrade_container(_check_config(config, record))  # a run written by an older rlrun, in today's spelling
    curve_path = folder / "eval.csv"
    if record["status"] == "completed" and not curve_path.is_file():
        raise Damaged("no eval.csv although run.json says completed")
    curve = read_curve(curve_path) if curve_path.is_file() else None
    return Run(folder, record, config, curve, _unsigned(folder), _run_id(folder))


def _unsigned(folder: Path) -> str | None:
    """Why the run's ``run.json`` is not signed under this user's key (:func:`signatures.unsigned_record`)."""
    try:
        return signatures.unsigned_record(folder)
    except (OSError, UserError) as error:  # changed meanwhile, or no key (one others may read is no key)
        return f"its signature cannot be checked ({str(error).splitlines()[0]})"


def _run_id(folder: Path) -> str | None:
    """The run id the folder's run manifest names, read as data (copies of a run share it)."""
    manifest = read_json(folder / signatures.RUN_MANIFEST) or {}
    run = manifest.get(signatures.RUN)
    return run["id"] if isinstance(run, dict) and isinstance(run.get("id"), str) else None


def _check_record(record: Any) -> None:
    """The fields a table reads, with the types DESIGN.md gives them (:mod:`rlrun.record.fields`)."""
    problem = record_problem(record)
    if problem is not None:
        raise Damaged(problem)
    if record["status"] == "completed" and record.get("final") is None:
        raise Damaged("run.json says completed but has no 'final' (with its mean_return)")
    for name, value in (record.get("final") or {}).items():
        if name in ("mean_return", "success_rate") and value is not None and not is_score(value):
            raise Damaged(f"run.json's final {name} is {shown(value)}, beyond ±{MAX_SCORE:g}: not a score")


def _check_config(config: Any, record: dict[str, Any]) -> dict[str, Any]:
    """The parts of ``config.yaml`` a table reads: a mapping whose ``algo`` and ``env`` are mappings, with the
    algorithm's class in ``algo._target_`` when ``run.json`` does not name the algorithm."""
    if not isinstance(config, dict):
        raise Damaged(f"config.yaml holds {type(config).__name__}, not a mapping")
    for key in ("env", "algo"):
        if key in config and not isinstance(config[key], dict):
            raise Damaged(f"config.yaml's {key!r} is {shown(config[key])}, not a mapping")
    if not record.get("algo"):
        target = config.get("algo", {}).get("_target_")
        if not isinstance(target, str) or not target:
            raise Damaged("config.yaml's 'algo._target_' is not a class name, and run.json names no 'algo'")
    return config


def read_curve(path: Path) -> Curve:
    """``eval.csv`` as columns, sorted by env steps; raises :class:`Damaged` when it cannot be parsed."""
    try:
        text = reading.read_text(path, reading.MAX_CSV_BYTES)
    except (OSError, ValueError) as error:
        raise Damaged(f"eval.csv cannot be parsed ({error})") from None
    try:
        rows = sorted((row.timesteps, row.mean_return, row.success_rate) for row in parse_eval_csv(text))
    except ValueError as error:
        raise Damaged(str(error)) from None
    return Curve(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows))
