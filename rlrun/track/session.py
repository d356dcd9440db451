"""The loggers of one run together: started, fed and finished as one, each failure caught and warned once.

A tracking failure never costs a run (issue 22, point 5): every call into a :class:`~rlrun.track.base.Tracker`
goes through :meth:`Tracking._call`, which turns an exception into one warning per logger and goes on.
TensorBoard's and the CSV file's writers are the exception: they write into the run folder, as before
trackers existed, and a failure there (a full disk) is the run's own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.logger import KVWriter, Logger

from rlrun.record.run_record import END_STATUSES, RunRecord
from rlrun.track.base import RunInfo, Tracker
from rlrun.track.loggers import logs_to_service, make_trackers
from rlrun.track.names import GROUP_FILE

log = logging.getLogger("rlrun")

# The run folder's files a tracker may upload when the run ends (each logger's ``artifacts`` setting picks)
RUN_ARTIFACTS = ("config.yaml", "run.json", "eval.csv", "model.zip", "vecnormalize.pkl", "*.mp4", "*.gif", "videos/*")

# The command that sends what did not reach a service
SYNC_COMMAND = "rlrun-track sync"

# The loggers of a config without a ``logger`` node (a run recorded before the logger group): TensorBoard's
DEFAULT_LOGGER = {"tensorboard": {"_target_": "rlrun.track.tensorboard.TensorBoard", "_partial_": True}}


def run_artifacts(run_dir: Path) -> list[Path]:
    """The files of :data:`RUN_ARTIFACTS` that the run folder holds."""
    found: list[Path] = []
    for pattern in RUN_ARTIFACTS:
        found.extend(path for path in sorted(run_dir.glob(pattern)) if path.is_file() and path not in found)
    return found


class Guarded(KVWriter):
    """A tracker's SB3 output format whose failures are warned about once rather than raised."""

    def __init__(self, writer: KVWriter, call: Callable[..., Any]) -> None:
        self.writer = writer
        self.call = call

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        self.call(self.writer.write, key_values, key_excluded, step)

    def close(self) -> None:
        self.call(self.writer.close)


class Tracking:
    """The run's trackers, in the order the ``logger`` list named them."""

    def __init__(self, trackers: Sequence[Tracker]) -> None:
        self.trackers = list(trackers)
        self.failed: set[str] = set()  # loggers already warned about
        self.data: dict[str, Any] | None = None  # run.json's data, whose tracking block is kept current

    @classmethod
    def from_config(cls, cfg: DictConfig) -> Tracking:
        """The loggers ``cfg.logger`` chooses, their settings checked (a mistake: exit 2, before training)."""
        logger = cfg.get("logger")
        tracking = cls(make_trackers(DEFAULT_LOGGER if logger is None else logger))
        tracking.check()
        return tracking

    def begin(self, run_dir: Path, cfg: DictConfig, data: dict[str, Any], meta: Mapping[str, Any]) -> None:
        """Start every tracker's run from run.json's ``data`` (a resumed run's carries ``resumes`` and the
        earlier session's ``tracking`` block), under its sweep's or study's run (:func:`read_group`); the block
        is kept in ``data`` from here on."""
        self.data = data
        resumes = data.get("resumes") or []
        group = dict(meta.get("tracking_group") or read_group(run_dir.parent))
        container = OmegaConf.to_container(cfg, resolve=True)
        assert isinstance(container, dict)
        info = RunInfo(
            run_dir=run_dir,
            config={str(key): value for key, value in container.items()},
            env=data.get("env"),
            env_id=str(data.get("env_id")),
            algo=data.get("algo"),
            seed=int(data.get("seed", cfg.seed)),
            config_hash=str(data.get("config_hash")),
            preset=data.get("preset"),
            versions=dict(data.get("versions") or {}),
            git=data.get("git"),
            sweep=group.get("name") or cfg.get("sweep"),
            resumed_from=resumes[-1]["from_step"] if resumes else None,
            previous=dict(data.get("tracking") or {}),
            group=group,
        )
        self.start(info)
        self.note()

    def note(self) -> None:
        """Put the trackers' current record into run.json's data (written with the record's next save)."""
        if self.data is not None and (block := self.record()) is not None and block != self.data.get("tracking"):
            self.data["tracking"] = block

    def logger(self, run_dir: Path, resumed_from: int | None) -> Logger:
        """SB3's logger writing to every chosen logger (``resumed_from``: the snapshot's step of a resume)."""
        return Logger(str(run_dir), [*self.output_formats(run_dir, resumed_from), _Noting(self)])

    def end(self, record: RunRecord) -> None:
        """The run ended with run.json's status: finish every tracker, record what was not sent."""
        status = record.data.get("status")
        status = status if status in END_STATUSES else "failed"
        self.finish(status, record.run_dir)
        self.note()
        if "tracking" in record.data:
            try:
                record.save()
            except OSError as error:  # a full disk: the log says it
                log.warning("tracking: run.json could not record the tracking block: %s", error)
        self.report_unsent(record.run_dir)

    def check(self) -> None:
        """Each logger's settings, before training (a bad setting is the user's mistake: exit 2)."""
        for tracker in self.trackers:
            tracker.check()

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        """Call a tracker's method; an exception becomes one warning for that logger."""
        try:
            return method(*args)
        except Exception as error:  # noqa: BLE001 - whatever a tracking service does, the run goes on
            owner = getattr(method, "__self__", None)
            name = getattr(owner, "name", "") or getattr(getattr(owner, "tracker", None), "name", "") or "a logger"
            if name not in self.failed:
                self.failed.add(name)
                log.warning("tracking: %s failed (%s: %s); training goes on", name, type(error).__name__, error)
            return None

    def start(self, info: RunInfo) -> None:
        """Start (or continue) every tracker's run."""
        for tracker in self.trackers:
            self._call(tracker.start, info)

    def output_formats(self, run_dir: Path, resumed_from: int | None) -> list[KVWriter]:
        """The SB3 output formats of all loggers, for the model's ``Logger``."""
        formats = []
        for tracker in self.trackers:
            writer = tracker.output_format(run_dir, resumed_from)
            formats.append(Guarded(writer, self._call) if logs_to_service([tracker.name]) else writer)
        return formats

    def finish(self, status: str, run_dir: Path) -> None:
        """End every tracker's run with ``status``, uploading the run folder's files."""
        artifacts = run_artifacts(run_dir)
        for tracker in self.trackers:
            self._call(tracker.finish, status, artifacts)

    def record(self) -> dict[str, Any] | None:
        """run.json's ``tracking`` block (None when no logger keeps a record: TensorBoard and CSV alone)."""
        block: dict[str, Any] = {}
        unsent = 0
        for tracker in self.trackers:
            own = self._call(tracker.record) or {}
            if own:
                block[tracker.name] = own
            unsent += self._call(tracker.unsent) or 0
        if not block and not unsent:
            return None
        block["unsent"] = unsent
        return block

    def report_unsent(self, run_dir: Path) -> None:
        """Say in the log what never reached a service, and the command that sends it."""
        unsent = sum(self._call(tracker.unsent) or 0 for tracker in self.trackers)
        if unsent:  # sync sends only where its command line (or the environment) says: the run's URI, named
            uris = [
                own["tracking_uri"]
                for own in [self._call(t.record) or {} for t in self.trackers]
                if own.get("tracking_uri")
            ]
            where = f"--tracking-uri {uris[0]} " if uris else ""
            log.warning(
                "tracking: %d logging calls did not reach the service; send them with: %s %s%s",
                unsent,
                SYNC_COMMAND,
                where,
                run_dir,
            )


class _Noting(KVWriter):
    """Keeps run.json's tracking block current as the run logs (a tracker may learn its run's id late)."""

    def __init__(self, tracking: Tracking) -> None:
        self.tracking = tracking

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        self.tracking.note()

    def close(self) -> None:
        """Nothing to close."""


def read_group(folder: Path) -> dict[str, Any]:
    """The tracking record of the sweep or study whose ``folder`` it is (:data:`GROUP_FILE`), or {}.

    A run finds the group it belongs to in its job's ``meta["tracking_group"]`` (a sweep's jobs: the record,
    handed to each job by :class:`rlrun.sweep.job.SweepTask`); a study's seeds, processes of their own started
    in their trial's folder, read the trial's record there, in their run folder's parent
    (:mod:`rlrun.tune.tracking`)."""
    try:
        data = json.loads((folder / GROUP_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
