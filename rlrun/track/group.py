"""A sweep's or a study's own tracked run, the parent of its jobs' (MLflow's ``mlflow.parentRunId``).

The sweep's (or study's) process opens it before any job starts, which also creates a new SQLite store once
rather than in every job at the same time. What each logger returned (:attr:`Group.record`) goes to the jobs:
a sweep's with their task (:class:`rlrun.sweep.job.SweepTask`), a trial's seeds read it in ``<folder>/tracking.json``
(:func:`rlrun.track.session.read_group`); that file also serves the next invocation of the same sweep, which
continues the same parent run. A logger that fails here is warned about once; the jobs then log on their own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlrun.record.formats import read_json, write_json
from rlrun.track.base import Tracker
from rlrun.track.loggers import make_trackers
from rlrun.track.names import GROUP_FILE
from rlrun.track.session import DEFAULT_LOGGER

log = logging.getLogger("rlrun")

# A sweep's files its run uploads when the sweep ends
SWEEP_ARTIFACTS = ("sweep.json", "table.md", "table.csv", "table.json", "curves.png")


class Group:
    """The trackers of a sweep or a study and their record (``tracking.json``)."""

    def __init__(self, trackers: Sequence[Tracker], folder: Path, record: dict[str, Any]) -> None:
        self.trackers = list(trackers)
        self.folder = folder
        self.record = record

    @classmethod
    def open(
        cls, logger: Mapping[str, Any] | None, folder: Path, name: str, kind: str, parent: Group | None = None
    ) -> Group:
        """Check the loggers' settings (a mistake: exit 2 before any job), then start the group's run (under
        ``parent``'s: a study's trial)."""
        trackers: list[Tracker] = make_trackers(DEFAULT_LOGGER if logger is None else logger)
        for tracker in trackers:
            tracker.check()
        previous = {"parent": parent.record} if parent is not None else read_json(folder / GROUP_FILE) or {}
        record: dict[str, Any] = {"name": name, "kind": kind}
        for tracker in trackers:
            try:
                own = tracker.start_group(folder, name, kind, previous)
            except Exception as error:  # noqa: BLE001 - the jobs then log on their own
                log.warning(
                    "tracking: %s could not start the %s's run (%s); its jobs log alone", tracker.name, kind, error
                )
                continue
            if own:
                record[tracker.name] = own
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / GROUP_FILE, record)
        return cls(trackers, folder, record)

    def log(self, params: Mapping[str, Any], metrics: Mapping[str, float], step: int, tags: Mapping[str, str]) -> None:
        """Log into the group's own run (a trial's values, objective and seeds)."""
        for tracker in self.trackers:
            if tracker.name not in self.record:
                continue
            try:
                tracker.log_params(params)
                tracker.set_tags(tags)
                if metrics:
                    tracker.log_metrics(metrics, step)
            except Exception as error:  # noqa: BLE001 - the study goes on
                log.warning("tracking: %s could not log the %s's values (%s)", tracker.name, self.record["kind"], error)

    def close(self, status: str, artifacts: Sequence[Path] | None = None) -> None:
        """End the group's run with ``status`` (``completed``, ``failed``, ``interrupted``), uploading
        ``artifacts`` (by default the sweep's files, :data:`SWEEP_ARTIFACTS`; those there)."""
        names = [self.folder / name for name in SWEEP_ARTIFACTS] if artifacts is None else artifacts
        there = [path for path in names if path.is_file()]
        for tracker in self.trackers:
            if tracker.name not in self.record:
                continue
            try:
                tracker.finish_group(self.record[tracker.name], status, there)
            except Exception as error:  # noqa: BLE001 - the sweep's own record is complete without it
                log.warning("tracking: %s could not end the %s's run (%s)", tracker.name, self.record["kind"], error)
