"""One trial of a study: its seeds trained in parallel, reported to the pruner as they go, then scored.

A trial reports the IQM over its seeds at each evaluation step once every seed has reached it, so
the pruner compares trials at equal steps; a pruned trial's seeds are stopped at once. The score is the
IQM over seeds of the final evaluation's mean return (``iqm``), of the mean over the evaluation curve
(``auc``: the area under it per step, evaluations being evenly spaced), or of the success rate.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from rlrun.record.fields import EvalRow
from rlrun.tune.seed_runs import SeedRun, stop_runs

HOST, PID = socket.gethostname(), os.getpid()


class TrialError(Exception):
    """A trial that cannot be scored (a seed failed, or the env reports no success)."""


@dataclass
class TrialOutcome:
    """How a trial ended: Optuna's state, its score or last reported value, and the error of a failure."""

    state: TrialState
    value: float | None = None
    step: int | None = None
    error: str | None = None


def _curve_value(objective: str, rows: list[EvalRow]) -> float | None:
    """One seed's value for the pruner from its evaluations so far (the last row for iqm and success)."""
    if objective == "auc":
        return float(np.mean([row.mean_return for row in rows]))
    return rows[-1].mean_return if objective == "iqm" else rows[-1].success_rate


def intermediate(objective: str, rows_by_seed: Sequence[list[EvalRow]], step: int) -> float | None:
    """The IQM over seeds at ``step``, or None where a seed reports no success rate."""
    from rlrun.table.stats import iqm  # scipy: once a trial reports

    values = [_curve_value(objective, [row for row in rows if row.timesteps <= step]) for rows in rows_by_seed]
    return None if any(value is None for value in values) else float(iqm([v for v in values if v is not None]))


def score(objective: str, records: Sequence[dict[str, Any]], rows_by_seed: Sequence[list[EvalRow]]) -> float:
    """The trial's score from its seeds' ``run.json`` (and ``eval.csv`` for ``auc``)."""
    from rlrun.table.stats import iqm  # scipy: once a trial is scored

    finals = [record["final"] for record in records]
    if objective == "success":
        if any(final["success_rate"] is None for final in finals):
            raise TrialError("the env reports no success (info['is_success']): use tune.objective=iqm or auc")
        values = [final["success_rate"] for final in finals]
    elif objective == "auc":
        values = [
            _curve_value("auc", rows) or final["mean_return"] for final, rows in zip(finals, rows_by_seed, strict=True)
        ]
    else:
        values = [final["mean_return"] for final in finals]
    return float(iqm(values))


class TrialRun:
    """An Optuna trial and the runs of its seeds, in ``<study>/trials/<number>/seed-<k>``."""

    def __init__(self, trial: optuna.Trial, folder: Path, seeds: int, args: Sequence[str], objective: str) -> None:
        self.trial, self.folder, self.objective = trial, folder, objective
        self.runs = [SeedRun(folder / f"seed-{seed}", seed, args) for seed in range(seeds)]
        self.reported = -1  # the last step reported to the pruner
        values = " ".join(trial.user_attrs.get("overrides", []))  # read here: title() is asked from other threads
        self._title = f"trial {trial.number}: {values}"

    def title(self) -> str:
        """``trial 3: algo.learning_rate=0.0003 algo.gamma=0.99`` (its values as overrides)."""
        return self._title

    def start(self) -> None:
        """Record where the trial runs (host, pid: a later rlrun-tune recovers it if this one dies), then start."""
        for key, value in (("host", HOST), ("pid", PID), ("folder", str(self.folder))):
            self.trial.set_user_attr(key, value)
        for run in self.runs:
            run.start()

    def poll(self) -> TrialOutcome | None:
        """The outcome once the trial has ended (or been pruned, or failed), else None."""
        statuses = [run.poll() for run in self.runs]
        failed = next((run for run, status in zip(self.runs, statuses, strict=True) if status not in (None, 0)), None)
        if failed is not None:
            self.stop()
            return TrialOutcome(TrialState.FAIL, error=f"seed {failed.seed}: {failed.error()}")
        damaged = next((run for run in self.runs if run.damaged is not None), None)
        if damaged is not None:  # its curve cannot be reported or scored: the trial fails, naming file and line
            self.stop()
            return TrialOutcome(TrialState.FAIL, error=f"seed {damaged.seed}: {damaged.damaged}")
        pruned = self._report()
        if pruned is not None or None in statuses:
            return pruned
        rows = [run.rows for run in self.runs]
        try:
            return TrialOutcome(TrialState.COMPLETE, score(self.objective, self._records(), rows))
        except TrialError as error:
            return TrialOutcome(TrialState.FAIL, error=str(error))

    def _records(self) -> list[dict[str, Any]]:
        """Each seed's ``run.json``, its fields checked for their types (:mod:`rlrun.record.fields`): a damaged one
        fails the trial (its score is over every seed), naming the seed, the file and the field."""
        records = []
        for run in self.runs:
            record, problem = run.checked_record()
            if record is None:
                raise TrialError(f"seed {run.seed}: {problem}")
            if record["status"] != "completed":
                raise TrialError(f"seed {run.seed}: ended {record['status']} without completing (see its run.json)")
            if record.get("final") is None:
                raise TrialError(f"seed {run.seed}: {run.folder / 'run.json'} says completed but has no 'final'")
            records.append(record)
        return records

    def _report(self) -> TrialOutcome | None:
        """Report each step every seed has reached; a PRUNED outcome when the pruner says so."""
        common = set.intersection(*({row.timesteps for row in run.rows} for run in self.runs))
        for step in sorted(s for s in common if s > self.reported):
            self.reported = step
            value = intermediate(self.objective, [run.rows for run in self.runs], step)
            if value is None:
                continue
            self.trial.report(value, step)
            if self.trial.should_prune():
                self.stop()
                return TrialOutcome(TrialState.PRUNED, value, step)
        return None

    def stop(self) -> None:
        """Stop every seed still running."""
        stop_runs(self.runs)
