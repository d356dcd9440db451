"""Aggregates across envs (``rlrun-table --aggregate``): normalised scores and rliable's statistics over them.

Each completed run's final return is normalised per env as ``(score - random) / (reference - random)``, with the
random policy's score and the reference of the env id from a references file (the shipped
``conf/benchmark/references.yaml``, RL Zoo's figures, or ``--references FILE``): the reference of the run's own
algorithm where the file's ``algos`` has one, else the env's ``reference``. A run whose env has no reference or no
random score is left out with one warning per env id naming the file to add it to.

The table's groups are the tasks (in the usual case one per env). Groups of the same algorithm and the same
overrides except the env's (``env=``, ``env.*``) form one aggregate, e.g. ``cartpole-ppo`` and ``acrobot-ppo``
make ``ppo``; with more than one aggregate, ``all`` pools every task. Over an aggregate's runs, rliable's
definitions (Agarwal et al. 2021, ``rliable.metrics``): IQM of all runs' scores pooled across tasks
(``scipy.stats.trim_mean(scores, 0.25)``), median and mean of the per-task mean scores, optimality gap = mean over
all runs of ``max(0, 1 - score)`` (gamma 1). With as many runs in each task, as rliable requires, these are
exactly rliable's; with unequal counts, pooled statistics count each run once. Intervals: rliable's stratified
bootstrap (runs resampled with replacement within each task, independently; task counts kept), 95% percentile
intervals, 10,000 resamples as in the tables (rliable's own defaults: 50,000 for intervals, 2,000 for profiles),
``numpy.random.default_rng(0)`` per aggregate, so each aggregate's numbers do not depend on the others.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy import stats

from rlrun.config.errors import UserError
from rlrun.config.keys import override_key
from rlrun.table.runs import Group

log = logging.getLogger("rlrun.table")

N_RESAMPLES = 10_000
CONFIDENCE = 0.95
SEED = 0
PERCENTILES = (100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2)  # 2.5 and 97.5
GAMMA = 1.0  # optimality gap: scores above it count as optimal
STATISTICS = ("iqm", "median", "mean", "optimality_gap")
ALL = "all"  # the aggregate over every task, when there are several aggregates
SHIPPED = "conf/benchmark/references.yaml"  # how warnings and files name the shipped file


def shipped_references() -> Path:
    """The references file rlrun ships (``conf/benchmark/references.yaml``, installed as ``rlrun.conf``)."""
    return Path(str(importlib.resources.files("rlrun.conf") / "benchmark" / "references.yaml"))


@dataclass(frozen=True)
class References:
    """A references file, checked: env id -> ``random``, ``reference`` and per-algorithm ``algos`` figures."""

    entries: dict[str, dict[str, Any]]
    name: str  # as warnings and files name it
    sha256: str

    def lookup(self, env_id: str, algo: str) -> tuple[float | None, float | None, str]:
        """random, reference and where the reference comes from (``algos.<algo>`` or ``reference``); the env id
        as the run gives it (``module:id``) or without its module."""
        entry = self.entries.get(env_id) or self.entries.get(env_id.rpartition(":")[2]) or {}
        figure = (entry.get("algos") or {}).get(algo)
        if figure is not None:
            return entry.get("random"), _mean(figure), f"algos.{algo}"
        return entry.get("random"), entry.get("reference"), "reference"


def _mean(figure: Any) -> float:
    return float(figure["mean"] if isinstance(figure, dict) else figure)


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value))


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"is {type(entry).__name__}, not a mapping with random and reference"
    for key in ("random", "reference"):
        if not _number(entry.get(key)):
            return f"has {key}: {entry.get(key)!r}, not a number or null"
    algos = entry.get("algos") or {}
    if not isinstance(algos, dict):
        return "has algos that is not a mapping of algorithm -> {mean: number}"
    for algo, figure in algos.items():
        value = figure.get("mean") if isinstance(figure, dict) else figure
        if value is None or not _number(value):
            return f"has algos.{algo}: {figure!r}, not a number or a mapping with a number as mean"
    return None


def load_references(path: Path | None = None) -> References:
    """Read and check a references file (``None``: the shipped one); raises UserError naming the bad entry."""
    name = SHIPPED if path is None else str(path)
    source = shipped_references() if path is None else Path(path)
    try:
        text = source.read_text(encoding="utf-8")
        entries = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"--references {name} cannot be read ({error})", "give a readable YAML file") from None
    except yaml.YAMLError as error:
        raise UserError(f"--references {name} is not valid YAML ({error})", "fix the file's YAML") from None
    if not isinstance(entries, dict):
        raise UserError(
            f"--references {name} holds {type(entries).__name__}, not a mapping of env ids",
            f"write one entry per env id as {SHIPPED} does: 'CartPole-v1: {{random: 22.0, reference: 500.0}}'",
        )
    for env_id, entry in entries.items():
        if (problem := _entry_problem(entry)) is not None:
            raise UserError(f"--references {name}: env id {env_id!r} {problem}", f"fix that entry (see {SHIPPED})")
    return References(entries, name, hashlib.sha256(text.encode()).hexdigest())


@dataclass
class Task:
    """One table group's runs, normalised: a stratum of the bootstrap."""

    group: Group
    random: float
    reference: float
    basis: str  # which figure of the file the reference is
    runs: list[dict[str, Any]]  # folder, seed, score, normalised

    @property
    def scores(self) -> np.ndarray:
        return np.array([run["normalised"] for run in self.runs], dtype=float)


@dataclass
class Aggregate:
    """The tasks of one algorithm and its overrides (or ``all``), with the statistics and profile over them."""

    name: str
    algo: str
    overrides: list[str]
    tasks: list[Task]
    estimates: dict[str, dict[str, float | None]] = field(default_factory=dict)
    profile: dict[str, list[float] | None] = field(default_factory=dict)


def normalise(score: float, random: float, reference: float) -> float:
    """``(score - random) / (reference - random)``: a random policy scores 0, the reference 1."""
    return (score - random) / (reference - random)


def tasks_of(groups: Sequence[Group], references: References) -> tuple[list[Task], list[dict[str, Any]]]:
    """The groups' completed runs normalised, and the env ids left out (one warning each) with why."""
    tasks: list[Task] = []
    missing: dict[str, dict[str, Any]] = {}
    for group in groups:
        done = [(run, score) for run in group.completed if (score := run.score("return")) is not None]
        if not done:
            continue
        random, reference, basis = references.lookup(group.env_id, group.algo)
        env_id = group.env_id.rpartition(":")[2]
        lacking = [key for key, value in (("random", random), ("reference", reference)) if value is None]
        if not lacking and random == reference:
            lacking = ["reference different from its random score"]
        if lacking:
            left = missing.setdefault(env_id, {"env_id": env_id, "missing": lacking, "runs": 0})
            left["runs"] += len(done)
            continue
        assert random is not None and reference is not None
        runs = [
            {"folder": run.folder, "seed": run.record["seed"], "score": score}
            | {"normalised": normalise(score, random, reference)}
            for run, score in done
        ]
        tasks.append(Task(group, float(random), float(reference), basis, runs))
    for env_id, left in sorted(missing.items()):
        log.warning(
            "leaving %d run(s) of %s out of the aggregate: %s has no %s for it; fix: copy %s, add %s: {random: ...,"
            " reference: ...} to the copy (the mean return of random actions and of a trained agent), and pass it"
            " with --references FILE",
            left["runs"],
            env_id,
            references.name,
            " or ".join(left["missing"]),
            shipped_references(),
            env_id,
        )
    return tasks, [missing[env_id] for env_id in sorted(missing)]


def _env_free(overrides: Sequence[str]) -> list[str]:
    return [o for o in overrides if override_key(o) != "env" and not override_key(o).startswith("env.")]


def aggregates_of(tasks: Sequence[Task]) -> list[Aggregate]:
    """Tasks grouped by algorithm and overrides except the env's, in table order; ``all`` last when several."""
    found: dict[tuple[str, ...], Aggregate] = {}
    for task in tasks:
        overrides = _env_free(task.group.overrides)
        key = (task.group.algo, *overrides)
        if key not in found:
            found[key] = Aggregate(" ".join(key), task.group.algo, overrides, [])
        found[key].tasks.append(task)
    aggregates = sorted(found.values(), key=lambda a: (a.algo, a.name))
    if len(aggregates) > 1:
        aggregates.append(Aggregate(ALL, ALL, [], list(tasks)))
    return aggregates


def estimate(tasks: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """rliable's four statistics of normalised scores given per task, each array ``(..., runs of the task)``;
    leading axes (bootstrap resamples) are kept."""
    pooled = np.concatenate(tasks, axis=-1)
    task_means = np.stack([scores.mean(axis=-1) for scores in tasks], axis=-1)
    return {
        "iqm": stats.trim_mean(pooled, 0.25, axis=-1),
        "median": np.median(task_means, axis=-1),
        "mean": np.mean(task_means, axis=-1),
        "optimality_gap": np.mean(np.maximum(0.0, GAMMA - pooled), axis=-1),
    }


def stratified_resamples(tasks: Sequence[np.ndarray], n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """rliable's stratified bootstrap: ``n`` resamples of each task's runs, drawn with replacement within that
    task only (so each keeps its task and its count), the tasks in order; each array is ``(n, runs of task)``."""
    return [scores[rng.integers(0, scores.size, size=(n, scores.size))] for scores in tasks]


def interval(samples: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap samples (axis 0)."""
    low, high = np.percentile(samples, PERCENTILES, axis=0)
    return float(low), float(high)


def profile_taus(aggregates: Sequence[Aggregate]) -> np.ndarray:
    """Thresholds of the performance profiles: 0 to 1, widened to every score, in steps of 1/100 of the span."""
    scores = np.concatenate([task.scores for a in aggregates for task in a.tasks] or [np.zeros(1)])
    low, high = min(0.0, float(np.floor(scores.min() * 20) / 20)), max(1.0, float(np.ceil(scores.max() * 20) / 20))
    return np.round(np.linspace(low, high, 101), 6)


def fraction_above(pooled: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """Performance profile (rliable's run-score distribution): the fraction of runs with a score > tau, for each
    tau (last axis); leading axes of ``pooled`` (resamples) are kept."""
    return np.stack([np.mean(pooled > tau, axis=-1) for tau in taus], axis=-1)


def compute(aggregate: Aggregate, taus: np.ndarray) -> None:
    """Fill ``aggregate.estimates`` (value, low, high per statistic) and ``profile`` (fraction, low, high)."""
    scores = [task.scores for task in aggregate.tasks]
    points = estimate(scores)
    runs = sum(s.size for s in scores)
    profile = fraction_above(np.concatenate(scores), taus)
    aggregate.profile = {"fraction": [float(v) for v in profile], "low": None, "high": None}
    if runs < 2:
        aggregate.estimates = {s: {"value": float(points[s]), "low": None, "high": None} for s in STATISTICS}
        return
    resampled = stratified_resamples(scores, N_RESAMPLES, np.random.default_rng(SEED))
    boot = estimate(resampled)
    aggregate.estimates = {
        s: dict(zip(("value", "low", "high"), (float(points[s]), *interval(boot[s])), strict=True)) for s in STATISTICS
    }
    band = np.percentile(fraction_above(np.concatenate(resampled, axis=-1), taus), PERCENTILES, axis=0)
    aggregate.profile["low"] = [float(v) for v in band[0]]
    aggregate.profile["high"] = [float(v) for v in band[1]]
