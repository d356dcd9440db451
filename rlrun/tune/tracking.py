"""A study as a tracking service shows it (``logger=[..., mlflow]`` on the ``rlrun-tune`` command line): the study
is a run of its own, each trial a run under it (its values as params, its seeds and state as tags, its
objective as a metric), and each seed's run a run under its trial's.

The seeds' processes find their trial's run in the trial's folder, their run folders' parent: the record
:meth:`Group.open <rlrun.track.group.Group.open>` writes there before they start
(:func:`rlrun.track.session.read_group`).
Nothing here is needed for the study itself: a tracking failure is warned about and ignored.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from omegaconf import DictConfig

from rlrun.track.group import Group
from rlrun.track.loggers import logs_to_service
from rlrun.tune.trial import TrialOutcome, TrialRun

# Optuna's trial states as run.json's statuses
_STATUS = {"COMPLETE": "completed", "PRUNED": "completed", "FAIL": "failed"}


class StudyTracking:
    """The study's run and its running trials' runs."""

    def __init__(self, base: DictConfig, name: str, study: Group) -> None:
        self.base, self.name = base, name  # the study's base config and name
        self.study = study
        self.trials: dict[int, Group] = {}

    @classmethod
    def open(cls, base: DictConfig, folder: Path, name: str) -> StudyTracking | None:
        """The study's run (in the study's ``folder``), when its runs log to a service; else None."""
        logger = dict(base.get("logger") or {})
        if not logs_to_service(logger):
            return None
        return cls(base, name, Group.open(logger, folder, name, "study"))

    def start(self, run: TrialRun) -> None:
        """Open the trial's run and start its seeds under it."""
        number = run.trial.number
        logger = dict(self.base.get("logger") or {})
        name = f"{self.name}-trial-{number}"
        group = self.trials[number] = Group.open(logger, run.folder, name, "trial", parent=self.study)
        values = dict(override.split("=", 1) for override in run.trial.user_attrs.get("overrides", []))
        seeds = ",".join(str(seed_run.seed) for seed_run in run.runs)
        group.log(values, {}, 0, {"trial": str(number), "seeds": seeds, "objective": run.objective})
        run.start()  # the seeds read the trial's record in run.folder

    def finish(self, run: TrialRun, outcome: TrialOutcome | None) -> None:
        """End the trial's run with its state and objective (None: the study was stopped)."""
        group = self.trials.pop(run.trial.number, None)
        if group is None:
            return
        state = outcome.state.name if outcome is not None else "STOPPED"
        metrics = {"objective": float(outcome.value)} if outcome is not None and outcome.value is not None else {}
        step = outcome.step if outcome is not None and outcome.step is not None else self.base.total_timesteps
        group.log({}, metrics, int(step), {"state": state})
        group.close(_STATUS.get(state, "interrupted"), [])

    def close(self, stopped: bool) -> None:
        """End the study's run (its report's files are uploaded by the report, if it is written)."""
        for number in list(self.trials):
            with suppress(Exception):
                self.trials.pop(number).close("interrupted", [])
        self.study.close("interrupted" if stopped else "completed", [])
