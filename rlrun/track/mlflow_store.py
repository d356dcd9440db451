"""MLflow's side of tracking: where the store is, and the operations a run sends to it, as replayable records.

Every call a run makes is an *operation*, a plain JSON object (``{"op": "metrics", "step": 512, ...}``), so
what could not be sent is kept as one line each in ``<run_dir>/tracking-unsent.jsonl`` and sent later, in
order, by :class:`Store` (``rlrun-track sync``). Sending is idempotent where MLflow allows: a run is created
once (its id then kept), and a metric is never logged again at a step at or before the last one the service
holds for it, so a replay, a resume after a crash or a second sync duplicates no rows.

Without ``tracking_uri``, the store is the SQLite file ``mlflow.db`` in the run's outputs folder (the nearest
folder named ``outputs`` above the run folder, else the run folder's parent), with artifacts in
``mlartifacts/`` beside it (MLflow would otherwise write ``./mlruns``). Several processes creating one SQLite
store at once crash (alembic), so the store is created under a file lock, and a sweep creates it before its
jobs start. Calls to a server are bounded (no retries, ``timeout_s``): a dead server answers at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from rlrun.config.errors import UserError
from rlrun.record import logs

log = logging.getLogger("rlrun")

STORE_NAME = "mlflow.db"
ARTIFACTS_NAME = "mlartifacts"
# run.json's statuses as MLflow's
STATUS = {"completed": "FINISHED", "failed": "FAILED", "interrupted": "KILLED", "running": "RUNNING"}
# URI schemes MLflow's tracking stores take (a plain path is a file store)
SCHEMES = ("http", "https", "sqlite", "file", "postgresql", "mysql", "mssql", "databricks", "databricks-uc")
_PARAM_LENGTH = 6000  # MLflow's limit on a param's value
_BATCH = 100  # MLflow's limit on params or tags per batch
_METRICS_BATCH = 1000  # MLflow's limit on metrics per batch


def uri_problem(uri: str) -> str | None:
    """What is wrong with a tracking URI (unparseable, a scheme MLflow has no store for), or None."""
    try:
        parsed = urlparse(uri)
    except ValueError as error:
        return f"it cannot be parsed ({error})"
    scheme = parsed.scheme.split("+")[0].lower()  # postgresql+psycopg2
    if not scheme:
        return None if uri.strip() else "it is empty"
    if len(scheme) == 1:  # a Windows drive letter: a path
        return None
    if scheme not in SCHEMES:
        return f"MLflow has no tracking store for the scheme '{parsed.scheme}:'"
    if scheme in ("http", "https") and not parsed.hostname:
        return "it names no host"
    if scheme == "sqlite" and not uri.startswith("sqlite:///"):
        return "a SQLite URI is sqlite:///relative/path.db or sqlite:////absolute/path.db"
    return None


def check_installed() -> None:
    """Refuse MLflow's logger where MLflow is not installed (without importing it)."""
    if importlib.util.find_spec("mlflow") is None:
        raise UserError("logger=[..., mlflow]: MLflow is not installed", 'pip install "rlrun[mlflow]"')


def check_uri(uri: str | None) -> None:
    """Refuse a tracking URI MLflow cannot use (exit 2, before training)."""
    check_installed()
    if uri is None:
        return
    problem = uri_problem(str(uri))
    if problem:
        raise UserError(
            f"logger.mlflow.tracking_uri={uri}: {problem}",
            "give http://host:5000 for a server, sqlite:///outputs/mlflow.db for a local store, "
            "or leave it unset (null) for the store in outputs/",
        )


def check_sqlite_store(uri: str, key: str = "--tracking-uri") -> None:
    """Refuse a local SQLite store whose file exists but is no SQLite database (a damaged ``mlflow.db``), before
    anything is sent: SQLAlchemy would fail mid-way with its ``DatabaseError``. A store still to be created is
    fine; other stores (servers, files) are MLflow's to judge."""
    if not uri.startswith("sqlite:///"):
        return
    path = Path(uri.removeprefix("sqlite:///"))
    if not path.is_file():
        return
    try:
        with contextlib.closing(sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)) as db:
            (verdict,) = db.execute("PRAGMA quick_check").fetchone()
        if verdict != "ok":
            raise sqlite3.DatabaseError(verdict)
    except sqlite3.DatabaseError as error:
        raise UserError(
            f"the MLflow store {path} is not a SQLite database MLflow can read ({error})",
            f"move it aside (mv {path} {path}.damaged) to have a new store made, or give {key} another store",
        ) from None


def outputs_folder(run_dir: Path) -> Path:
    """The outputs folder a run belongs to: the nearest ``outputs`` above it, else the run folder's parent."""
    run_dir = run_dir.absolute()
    return next((p for p in run_dir.parents if p.name == "outputs"), run_dir.parent)


def local_uri(folder: Path) -> str:
    """The SQLite store in ``folder``."""
    return f"sqlite:///{(folder / STORE_NAME).absolute()}"


def bound_calls(timeout_s: float) -> None:
    """A dead server fails a call at once rather than after minutes of retries (a user's own settings win)."""
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(max(1, round(timeout_s))))


@contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """For a SQLite store: hold ``<store>.lock`` (blocking) while the store may be created; else nothing."""
    if not uri.startswith("sqlite:///"):
        yield
        return
    path = Path(uri.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _text(value: Any) -> str:
    return str(value)[:_PARAM_LENGTH]


class Store:
    """One tracking store (a URI), opened once; :meth:`apply` sends one operation of a run."""

    def __init__(self, uri: str, experiment: str, timeout_s: float = 5.0) -> None:
        bound_calls(timeout_s)
        started = time.perf_counter()
        from mlflow import MlflowClient  # about 1.5 s: only when a run asks for MLflow

        self.import_s = time.perf_counter() - started
        self.uri = uri
        self.experiment = experiment
        with logs.to_log_files(logs.MLFLOW_STORE_LOGGERS):  # a new store's "Creating initial ... tables": rlrun.log
            self.client = MlflowClient(tracking_uri=uri)
        self.experiment_id: str | None = None
        self.run_id: str | None = None
        self.last_step: dict[str, int] = {}  # per metric: the last step the service holds
        self.open_s = 0.0
        self.error: str | None = None  # the last failure of a replay

    def open(self) -> str:
        """The experiment's id, the store and the experiment created if missing (under the store's lock)."""
        if self.experiment_id is None:
            started = time.perf_counter()
            with store_lock(self.uri), logs.to_log_files(logs.MLFLOW_STORE_LOGGERS):
                found = self.client.get_experiment_by_name(self.experiment)
                if found is None:
                    location = None
                    if self.uri.startswith("sqlite:///"):
                        folder = Path(self.uri.removeprefix("sqlite:///")).parent / ARTIFACTS_NAME
                        location = (folder / self.experiment).absolute().as_uri()
                    try:
                        self.experiment_id = self.client.create_experiment(self.experiment, artifact_location=location)
                    except Exception:  # created meanwhile by another process of a server's
                        found = self.client.get_experiment_by_name(self.experiment)
                        if found is None:
                            raise
                if found is not None:
                    self.experiment_id = found.experiment_id
            self.open_s += time.perf_counter() - started
        assert self.experiment_id is not None
        return self.experiment_id

    def continue_run(self, run_id: str) -> None:
        """Log into an existing run from here on, where its metrics stop (a resume, a replay)."""
        run = self.client.get_run(run_id)
        self.run_id = run_id
        for key in run.data.metrics:
            history = self.client.get_metric_history(run_id, key)
            self.last_step[key] = max((metric.step for metric in history), default=-1)

    def find_run(self, run_dir: str) -> str | None:
        """The run already imported from ``run_dir`` (tag ``run_dir``), if any."""
        runs = self.client.search_runs([self.open()], filter_string=f"tags.run_dir = '{run_dir}'", max_results=1)
        return runs[0].info.run_id if runs else None

    def apply(self, op: Mapping[str, Any], run_dir: Path) -> None:
        """Send one operation (see the module's docstring) of the run in ``run_dir``."""
        from mlflow.entities import Param, RunTag

        kind = op["op"]
        if kind == "start":
            self._start(op)
            return
        if self.run_id is None:
            raise RuntimeError("no MLflow run to log into (its start was not sent)")
        if kind == "params":
            params = [Param(str(key), _text(value)) for key, value in op["params"].items()]
            for first in range(0, len(params), _BATCH):
                self.client.log_batch(self.run_id, params=params[first : first + _BATCH])
        elif kind == "metrics":
            self.log_metrics([op])
        elif kind == "tags":
            tags = [RunTag(str(key), _text(value)) for key, value in op["tags"].items()]
            self.client.log_batch(self.run_id, tags=tags)
        elif kind == "artifacts":
            for name in op["paths"]:
                path = Path(name) if Path(name).is_absolute() else run_dir / name
                if path.is_file():
                    folder = str(Path(name).parent) if not Path(name).is_absolute() else None
                    self.client.log_artifact(self.run_id, str(path), None if folder in (None, ".") else folder)
        elif kind == "end":
            self.client.set_terminated(self.run_id, STATUS.get(op["status"], "FAILED"), op.get("time"))
        else:
            raise ValueError(f"unknown tracking operation {kind!r}")

    def log_metrics(self, ops: Sequence[Mapping[str, Any]]) -> None:
        """Send several ``metrics`` operations in as few calls as MLflow allows (1,000 values each), leaving out
        every value at or before the last step the service holds for its metric."""
        from mlflow.entities import Metric

        if self.run_id is None:
            raise RuntimeError("no MLflow run to log into (its start was not sent)")
        metrics = []
        last = dict(self.last_step)
        for op in ops:
            step, stamp = int(op["step"]), int(op.get("time") or time.time() * 1000)
            for key, value in op["metrics"].items():
                if step > last.get(key, -1):  # also a second value at one step: the first is kept
                    metrics.append(Metric(key, float(value), stamp, step))
                    last[key] = step
        for first in range(0, len(metrics), _METRICS_BATCH):
            chunk = metrics[first : first + _METRICS_BATCH]
            self.client.log_batch(self.run_id, metrics=chunk)
            for metric in chunk:
                self.last_step[metric.key] = max(metric.step, self.last_step.get(metric.key, -1))

    def _start(self, op: Mapping[str, Any]) -> None:
        """Create the run (or continue the one named, or the one already imported from the same folder)."""
        previous = op.get("run_id") or (self.find_run(op["tags"]["run_dir"]) if op.get("find") else None)
        if previous:
            self.continue_run(previous)
            self.client.update_run(previous, status="RUNNING")
            return
        tags = {str(key): _text(value) for key, value in op["tags"].items()}
        run = self.client.create_run(self.open(), start_time=op.get("time"), tags=tags, run_name=op.get("name"))
        self.run_id = run.info.run_id
