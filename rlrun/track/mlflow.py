"""``logger=[..., mlflow]``: each run as an MLflow run (params, metrics at their env step, tags, artifacts).

Every call is an operation (:mod:`rlrun.track.mlflow_store`) queued to a thread of its own, which imports MLflow,
opens the store once and sends; the run waits for its start (the fixed cost, reported in the log) before
training, and for nothing after that. When the service fails, the thread
warns once and keeps each operation in ``<run_dir>/tracking-unsent.jsonl`` instead; after each periodic
evaluation it tries that file again. At the end the run waits for the thread while it makes progress (an
operation done within ``wait_s``); what is still unsent is in that file, counted in run.json's
``tracking.unsent``, and ``rlrun-track sync RUN_DIR`` sends it. A resumed run continues the same MLflow run
(its id is in run.json's ``tracking.mlflow``) and logs no step twice. A sweep is an MLflow run of its own,
the parent of its jobs'.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlrun.record import formats
from rlrun.track.base import RunInfo, Tracker
from rlrun.track.mlflow_store import Store, check_uri, local_uri, outputs_folder
from rlrun.track.names import UNSENT_NAME

log = logging.getLogger("rlrun")

DEFAULT_ARTIFACTS = ("config.yaml", "run.json", "eval.csv", "model.zip", "*.mp4", "*.gif", "videos/*")
_QUEUE = 10_000  # operations waiting for the thread; beyond that they go straight to the unsent file
_HELD = 200  # metrics operations held at most before they are sent (MLflow takes 1,000 values a call)
_RETRY = {"op": "retry"}  # not an operation of the run: asks the thread to send the unsent file again
_STOP = {"op": "stop"}
_READY = {"op": "ready"}  # the operations of the run's start are done


def read_unsent(path: Path) -> list[dict[str, Any]]:
    """The operations kept in an unsent file (a line cut short by a crash is skipped)."""
    ops: list[dict[str, Any]] = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                ops.append(json.loads(line))
            except ValueError:
                continue
    return ops


def replay(store: Store, ops: list[dict[str, Any]], run_dir: Path) -> list[dict[str, Any]]:
    """Send ``ops`` in order; those not sent (from the first failure on), led by the start that continues
    the run where one was created meanwhile. Raises nothing: the failure is in ``store.error``."""
    for index, op in enumerate(ops):
        try:
            store.apply(op, run_dir)
        except Exception as error:  # noqa: BLE001 - the rest is kept for later
            store.error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            rest = ops[index:]
            if store.run_id is not None and rest[0]["op"] != "start":
                rest = [{"op": "start", "run_id": store.run_id}, *rest]
            return rest
    return []


class MlflowTracker(Tracker):
    """An MLflow run per rlrun run (see the module's docstring)."""

    name = "mlflow"

    def __init__(
        self,
        tracking_uri: str | None = None,
        experiment: str = "rlrun",
        run_name: str = "{env}-{algo}-seed{seed}",
        tags: Mapping[str, Any] | None = None,
        artifacts: Sequence[str] = DEFAULT_ARTIFACTS,
        timeout_s: float = 5.0,
        wait_s: float = 30.0,
        flush_s: float = 5.0,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.run_name = run_name
        self.tags = dict(tags or {})
        self.artifacts = list(artifacts)
        self.timeout_s = timeout_s
        self.wait_s = wait_s
        self.flush_s = flush_s
        self.uri: str | None = None
        self.run_id: str | None = None
        self.unsent_path: Path | None = None
        self.queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=_QUEUE)
        self.lock = threading.Lock()  # the unsent file
        self.down = False  # the service failed: operations go to the unsent file until a retry succeeds
        self.abandoned = False  # the run ended without waiting for the thread
        self.done = threading.Event()
        self.ready = threading.Event()  # the run's start went (or failed)
        self.thread: threading.Thread | None = None
        self.store: Store | None = None
        self.run_dir = Path()
        self.opening = 0.0  # when the thread started opening the store
        self.progress = time.monotonic()  # when the thread last finished an operation
        self.current: list[dict[str, Any]] = []  # the operations being sent
        self.pending: list[dict[str, Any]] = []  # metrics held, to be sent together
        self.held = 0.0  # when the oldest of them came

    def check(self) -> None:
        check_uri(self.tracking_uri)

    def _name(self, info: RunInfo) -> str:
        fields = info.name_fields()
        try:
            return self.run_name.format(**fields)
        except (KeyError, IndexError, ValueError):
            return info.run_dir.name

    def start(self, info: RunInfo) -> None:
        self.uri = str(self.tracking_uri) if self.tracking_uri else local_uri(outputs_folder(info.run_dir))
        self.run_dir = info.run_dir
        self.unsent_path = info.run_dir / UNSENT_NAME
        previous = info.previous.get("mlflow") or {}
        self.run_id = previous.get("run_id") if previous.get("tracking_uri") == self.uri else None
        self.thread = threading.Thread(target=self._work, name="rlrun-mlflow", daemon=True)
        self.thread.start()
        if self.unsent_path.is_file():  # an earlier session's operations go first
            self.down = True
            self._put(_RETRY)
        if self.run_id is not None or (info.resumed_from is not None and self._unsent_start()):
            if self.run_id is not None:  # else the earlier session's start, among the unsent operations
                self._put({"op": "start", "run_id": self.run_id})  # the same run, from where it stopped
            self.set_tags({"status": "running"})
        else:
            tags = {"run_dir": str(info.run_dir.absolute()), "status": "running", **self.tags}
            if info.sweep:
                tags["sweep"] = info.sweep
            if parent := (info.group.get("mlflow") or {}).get("run_id"):
                tags["mlflow.parentRunId"] = parent
            self._put({"op": "start", "name": self._name(info), "tags": tags, "time": _ms()})
            self._put({"op": "params", "params": info.params()})
        self._put(_READY)
        # the fixed cost (import, store, run) before training, not during it: training's own time stays
        # the logging's alone; a service that hangs holds the start up for one bounded call at most
        self.ready.wait(self.timeout_s + 60.0)

    def _unsent_start(self) -> bool:
        """Whether the earlier session's start is among its unsent operations (sent before what follows)."""
        return self.unsent_path is not None and any(op["op"] == "start" for op in read_unsent(self.unsent_path))

    def log_params(self, params: Mapping[str, Any]) -> None:
        self._put({"op": "params", "params": dict(params)})

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        self._put({"op": "metrics", "step": step, "metrics": dict(metrics), "time": _ms()})

    def log_artifacts(self, paths: Sequence[Path]) -> None:
        self._put({"op": "artifacts", "paths": [self._relative(p) for p in paths]})

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self._put({"op": "tags", "tags": dict(tags)})

    def retry(self) -> None:
        if self.down:
            self._put(_RETRY)

    def finish(self, status: str, artifacts: Sequence[Path] = ()) -> None:
        chosen = [p for p in artifacts if any(p.match(pattern) for pattern in self.artifacts)]
        if chosen:
            self.log_artifacts(chosen)
        self.set_tags({"status": status})
        self._put({"op": "end", "status": status, "time": _ms()})
        self._put(_STOP)
        while not self.done.wait(0.05):
            if time.monotonic() - self.progress < self.wait_s:
                continue
            # the service hangs: what is left goes to the unsent file
            with self.lock:
                self.abandoned = True
                left = [*self.current, *self.pending]
                while True:
                    try:
                        left.append(self.queue.get_nowait())
                    except queue.Empty:
                        break
                self._keep([op for op in left if op not in (_RETRY, _STOP, _READY)])
            log.warning("tracking: MLflow did not answer within %.0f s at the end of the run", self.wait_s)
            break

    def record(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "tracking_uri": self.uri, "experiment": self.experiment}

    def unsent(self) -> int:
        with self.lock:
            return len(read_unsent(self.unsent_path)) if self.unsent_path is not None else 0

    def _put(self, op: dict[str, Any]) -> None:
        if self.thread is None and self.store is not None:  # a group's run (start_group): sent at once
            self.store.apply(op, self.run_dir)
            return
        try:
            self.queue.put_nowait(op)
        except queue.Full:
            with self.lock:
                self._keep([op])

    def _relative(self, path: Path) -> str:
        try:
            return str(path.absolute().relative_to(self.run_dir.absolute()))
        except ValueError:
            return str(path.absolute())

    def _keep(self, ops: list[dict[str, Any]]) -> None:
        """Append operations to the unsent file (the caller holds the lock)."""
        if ops and self.unsent_path is not None:
            with formats.open_for_writing(self.unsent_path, append=True) as file:
                file.writelines(json.dumps(op, default=str) + "\n" for op in ops)

    def _work(self) -> None:
        """The thread: open the store, then send each operation, or keep it while the service is down. Metrics
        are held for ``flush_s`` seconds and sent together (one call where SB3 writes several times a second)."""
        while True:
            wait = None if not self.pending else max(0.0, self.held + self.flush_s - time.monotonic())
            try:
                op = self.queue.get(timeout=wait)
            except queue.Empty:
                self._flush()
                continue
            with self.lock:
                if self.abandoned:
                    return
                if op["op"] == "metrics":
                    if not self.pending:
                        self.held = time.monotonic()
                    self.pending.append(op)
            if op["op"] == "metrics":
                if len(self.pending) >= _HELD:
                    self._flush()
                continue
            self._flush()  # the metrics held go first: the operations keep their order
            if op is _STOP:
                self.done.set()
                return
            if op is _READY:
                self.ready.set()
                continue
            with self.lock:
                self.current = [op]
            self._send(op)
            with self.lock:
                self.current = []
                self.progress = time.monotonic()

    def _flush(self) -> None:
        """Send the metrics held, in one call where MLflow allows."""
        with self.lock:
            ops, self.pending = self.pending, []
            self.current = ops
        if ops and self.down:
            with self.lock:
                if not self.abandoned:
                    self._keep(ops)
        elif ops:
            try:
                self._open()
                assert self.store is not None
                self.store.log_metrics(ops)
            except Exception as error:  # noqa: BLE001 - the run goes on; what was not sent is kept
                self._fail(error, ops)
        with self.lock:
            self.current = []
            self.progress = time.monotonic()

    def _send(self, op: dict[str, Any]) -> None:
        if op is _RETRY:
            self._retry()
            return
        if self.down:
            with self.lock:
                if not self.abandoned:
                    self._keep([op])
            return
        try:
            self._open()
            assert self.store is not None
            self.store.apply(op, self.run_dir)
            if op["op"] == "start":
                self.run_id = self.store.run_id
                log.info(
                    "tracking: MLflow run %s in %s (fixed cost: import %.1f s, store and run %.1f s)",
                    self.run_id,
                    self.uri,
                    self.store.import_s,
                    time.perf_counter() - self.opening - self.store.import_s,
                )
        except Exception as error:  # noqa: BLE001 - the run goes on; what was not sent is kept
            self._fail(error, [op])

    def _open(self) -> None:
        if self.store is None:
            self.opening = time.perf_counter()
            assert self.uri is not None
            self.store = Store(self.uri, self.experiment, self.timeout_s)

    def _fail(self, error: Exception, ops: list[dict[str, Any]]) -> None:
        with self.lock:
            if self.abandoned:
                return
            self.down = True
            self._keep(ops)
        log.warning(
            "tracking: MLflow at %s failed (%s: %s); training goes on, what is not sent is kept in %s and sent "
            "again after each evaluation",
            self.uri,
            type(error).__name__,
            str(error).splitlines()[0] if str(error) else "",
            self.unsent_path,
        )

    def _retry(self) -> None:
        """Send the unsent file again; the service is up again once all of it went."""
        assert self.unsent_path is not None
        try:
            self._open()
        except Exception:  # noqa: BLE001 - MLflow itself cannot be imported: nothing to retry with
            return
        assert self.store is not None
        with self.lock:
            ops = read_unsent(self.unsent_path)
        rest = replay(self.store, ops, self.run_dir)
        with self.lock:
            if self.abandoned:
                return
            self.run_id = self.store.run_id or self.run_id
            self.unsent_path.unlink(missing_ok=True)
            self._keep(rest)
            self.down = bool(rest)
        if not rest:
            log.info("tracking: MLflow answers again; %d kept operations sent", len(ops))

    # a sweep or a study: its own run, the parent of its jobs'
    def start_group(self, folder: Path, name: str, kind: str, previous: dict[str, Any]) -> dict[str, Any]:
        check_uri(self.tracking_uri)
        self.uri = str(self.tracking_uri) if self.tracking_uri else local_uri(outputs_folder(folder / "job"))
        self.store = Store(self.uri, self.experiment, self.timeout_s)
        self.run_dir = folder
        own = previous.get("mlflow") or {}
        same = own.get("tracking_uri") == self.uri
        op: dict[str, Any] = {"op": "start", "run_id": own.get("run_id") if same else None}
        if op["run_id"] is None:
            tags = {"run_dir": str(folder.absolute()), kind: name, "status": "running", **self.tags}
            if parent := ((previous.get("parent") or {}).get("mlflow") or {}).get("run_id"):
                tags["mlflow.parentRunId"] = parent  # a study's trial: under the study's run
            op.update(name=name, tags=tags, time=_ms())
        self.store.apply(op, folder)
        self.run_id = self.store.run_id
        return {"run_id": self.run_id, "tracking_uri": self.uri, "experiment": self.experiment}

    def finish_group(self, record: dict[str, Any], status: str, artifacts: Sequence[Path] = ()) -> None:
        if self.store is None or self.store.run_id is None:
            return
        ops: list[dict[str, Any]] = [
            {"op": "artifacts", "paths": [self._relative(p) for p in artifacts]},
            {"op": "tags", "tags": {"status": status}},
            {"op": "end", "status": status, "time": _ms()},
        ]
        for op in ops:
            self.store.apply(op, self.run_dir)


def _ms() -> int:
    return int(time.time() * 1000)
