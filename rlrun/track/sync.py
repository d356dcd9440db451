"""``rlrun-track sync``: send to MLflow what a run could not send, or import a run trained without a logger.

A run folder is all that is needed (nothing in it depends on the service): ``tracking-unsent.jsonl`` holds the
operations a run kept while the service was down; a run without an MLflow run is imported from its
``config.yaml`` and ``run.json`` (params, tags, status, final metrics), its TensorBoard scalars (``tb/``; else
``eval.csv``'s evaluations) and its files. Syncing is idempotent: the MLflow run is found again (its id in
run.json's ``tracking.mlflow``, or the ``run_dir`` tag of an imported run) and no metric is logged twice at a
step.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record import formats, reading, regular_files, signatures
from rlrun.record.fields import parse_eval_csv
from rlrun.record.formats import read_json, write_json
from rlrun.record.lock import claim
from rlrun.record.run_record import END_STATUSES
from rlrun.track import event_files
from rlrun.track.base import flatten
from rlrun.track.mlflow import DEFAULT_ARTIFACTS, read_unsent, replay
from rlrun.track.mlflow_store import Store, check_sqlite_store, check_uri, local_uri, outputs_folder
from rlrun.track.names import UNSENT_NAME
from rlrun.track.session import run_artifacts

log = logging.getLogger("rlrun")

URI_VARIABLE = "MLFLOW_TRACKING_URI"  # the user's environment names the server, as MLflow's own
_RECORD_PARAMS = ("env", "env_id", "algo", "seed", "config_hash", "preset", "git")


def tb_scalars(folder: Path) -> dict[int, dict[str, float]]:
    """The scalars of a run's TensorBoard event files, by step (the last value written at a step wins); the points
    after a damaged record, which TensorBoard cannot read, are said (:mod:`rlrun.track.event_files`)."""
    if not folder.is_dir():
        return {}
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder), size_guidance={"scalars": 0}, purge_orphaned_data=True).Reload()
    for path, count in event_files.unread_points(folder).items():  # TensorBoard stops at damage without a word
        log.warning("%s: %d point(s) after a damaged record cannot be read and are not synced", path, count)
    by_step: dict[int, dict[str, float]] = defaultdict(dict)
    for tag in events.Tags().get("scalars", []):
        for event in events.Scalars(tag):
            by_step[int(event.step)][tag] = float(event.value)
    return dict(by_step)


def eval_scalars(path: Path) -> dict[int, dict[str, float]]:
    """``eval.csv``'s evaluations as ``eval/*`` metrics by step (for a run without ``tb/``)."""
    if not path.is_file():
        return {}
    by_step: dict[int, dict[str, float]] = {}
    for row in parse_eval_csv(reading.read_text(path, reading.MAX_CSV_BYTES)):
        values = {"eval/mean_reward": row.mean_return}
        if row.success_rate is not None:
            values["eval/success_rate"] = row.success_rate
        by_step[row.timesteps] = values
    return by_step


def import_ops(run_dir: Path, data: dict[str, Any], config: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The operations that log a finished (or stopped) run into MLflow from its folder alone."""
    status = data.get("status") if data.get("status") in END_STATUSES else "interrupted"
    params = flatten(config)
    params.update({key: data.get(key) for key in _RECORD_PARAMS})
    params.update({f"versions.{key}": value for key, value in (data.get("versions") or {}).items()})
    tags = {"run_dir": str(run_dir.absolute()), "status": status, "imported": "rlrun-track sync"}
    ops: list[dict[str, Any]] = [
        {"op": "start", "name": name, "tags": tags, "find": True},
        {"op": "params", "params": params},
    ]
    scalars = tb_scalars(run_dir / "tb") or eval_scalars(run_dir / "eval.csv")
    ops += [{"op": "metrics", "step": step, "metrics": scalars[step]} for step in sorted(scalars)]
    final = data.get("final") or {}
    finals = {f"final/{key}": final[key] for key in ("mean_return", "success_rate") if final.get(key) is not None}
    if finals and not any("final/mean_return" in m for m in scalars.values()):
        ops.append({"op": "metrics", "step": int(data.get("timesteps") or 0), "metrics": finals})
    files = [p for p in run_artifacts(run_dir) if any(p.match(pattern) for pattern in DEFAULT_ARTIFACTS)]
    ops.append({"op": "artifacts", "paths": [str(p.relative_to(run_dir)) for p in files]})
    ops.append({"op": "end", "status": status})
    return ops


def sync_run(run_dir: Path, tracking_uri: str | None = None, experiment: str | None = None) -> tuple[str, int]:
    """Send the run's unsent operations, or import it; its MLflow run id and how many operations are still
    unsent. Holds the run folder's lock meanwhile (a run still writing there is refused).

    Only a trusted folder is sent (its signatures verify under this user's key), only to ``tracking_uri`` (the
    command line's, else ``MLFLOW_TRACKING_URI``), else to the SQLite store of the outputs folder it lies in:
    never to a URI the folder names. Only regular files inside the folder are sent, never through a link."""
    what = f"rlrun-track sync {run_dir}"
    data = read_json(run_dir / "run.json")
    if data is None or not (run_dir / "config.yaml").is_file():
        raise UserError(f"{run_dir} is not a run folder (no run.json or config.yaml)", "give a folder under outputs/")
    signatures.check_folder(run_dir, what)
    regular_files.check_folder(run_dir, what)  # hard links too: the lock is taken before anything is sent
    config = formats.read_yaml(run_dir / "config.yaml")
    if not isinstance(config, dict):
        raise UserError(f"{run_dir}: config.yaml cannot be read", "restore it from a copy")
    settings = (config.get("logger") or {}).get("mlflow") or {}
    tracking = data.get("tracking") or {}
    known = tracking.get("mlflow") or {}
    check_uri(tracking_uri)
    uri = tracking_uri or os.environ.get(URI_VARIABLE) or local_uri(outputs_folder(run_dir))
    recorded = known.get("tracking_uri") or settings.get("tracking_uri")
    if recorded and recorded != uri:
        log.warning("%s: the run logged to %s; sending to %s (give --tracking-uri to choose)", run_dir, recorded, uri)
    experiment = experiment or known.get("experiment") or settings.get("experiment") or "rlrun"
    check_sqlite_store(uri)
    with claim(run_dir):
        unsent = read_unsent(run_dir / UNSENT_NAME)
        run_id = known.get("run_id") if known.get("tracking_uri") == uri else None
        if run_id:
            later = [op for op in unsent if op["op"] != "start" or op.get("run_id")]  # the run exists
            ops = [{"op": "start", "run_id": run_id}, *later] if later else []
        elif any(op["op"] == "start" for op in unsent):
            ops = unsent
        else:
            name = f"{data.get('env')}-{data.get('algo')}-seed{data.get('seed')}"
            ops = import_ops(run_dir, data, {str(k): v for k, v in config.items()}, name)
        if not ops:
            return str(run_id), 0
        store = Store(uri, experiment)
        rest = replay(store, inside(run_dir, ops), run_dir)
        (run_dir / UNSENT_NAME).unlink(missing_ok=True)
        if rest:
            with formats.open_for_writing(run_dir / UNSENT_NAME) as file:
                file.writelines(json.dumps(op, default=str) + "\n" for op in rest)
        if store.run_id is not None:
            mlflow_record = {"run_id": store.run_id, "tracking_uri": uri, "experiment": experiment}
            data["tracking"] = {**tracking, "mlflow": mlflow_record, "unsent": len(rest)}
            write_json(run_dir / "run.json", data)
            signatures.sign_record(run_dir)
        return str(store.run_id), len(rest)


def inside(run_dir: Path, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ops`` with each artifact path kept only when it names a regular file inside ``run_dir``: relative, no
    ``..``, no link on the way (``tracking-unsent.jsonl`` is the folder's, and may name any path)."""
    kept = []
    for op in ops:
        if op.get("op") == "artifacts":
            paths = [str(p) for p in op.get("paths") or [] if _regular_inside(run_dir, str(p))]
            if len(paths) < len(op.get("paths") or []):
                log.warning("%s: left out artifact paths outside the folder or through a link", run_dir)
            op = {**op, "paths": paths}
        kept.append(op)
    return kept


def _regular_inside(run_dir: Path, name: str) -> bool:
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return False
    path = run_dir
    for part in relative.parts:
        path = path / part
        if path.is_symlink():
            return False
    return path.is_file()


def _run_folders(folder: Path) -> list[Path]:
    """The run folders in or under ``folder`` (those with a run.json)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder", "give a run folder, e.g. outputs/runs/<env>-<algo>/<run>")
    if (folder / "run.json").is_file():
        return [folder]
    found = sorted(p.parent for p in folder.glob("**/run.json") if "attempts" not in p.relative_to(folder).parts)
    if not found:
        raise UserError(f"{folder} holds no run folder (no run.json in it or under it)", "give a run folder")
    return found


def _services(run_dir: Path) -> list[str]:
    """The services a run logged to (run.json's ``tracking``); MLflow for a run that logged to none."""
    data = read_json(run_dir / "run.json")
    tracking = data.get("tracking") if isinstance(data, dict) else None
    logged = [name for name in ("mlflow", "wandb") if isinstance(tracking, dict) and name in tracking]
    return logged or ["mlflow"]


def _sync_one(run_dir: Path, tracking_uri: str | None, experiment: str | None, timeout: float) -> int:
    """Sync one run to each of its services; how many operations (MLflow) or sessions (W&B) are left unsent."""
    left = 0
    for service in _services(run_dir):
        if service == "wandb":
            from rlrun.track.wandb import upload

            status = upload(run_dir, timeout)
            left += status != 0
            state = "uploaded" if status == 0 else f"not uploaded (wandb sync exited {status})"
            print(f"{run_dir}: W&B: {state}")
            continue
        run_id, unsent = sync_run(run_dir, tracking_uri, experiment)
        left += unsent
        state = f"{unsent} operations still unsent" if unsent else "in MLflow"
        print(f"{run_dir}: MLflow run {run_id}: {state}")
    return left


def sync_folders(folders: list[Path], tracking_uri: str | None, experiment: str | None, timeout: float) -> int:
    """``rlrun-track sync``: each run in or under ``folders`` to its services, a line each; how many operations
    or sessions are left unsent."""
    runs = [run for folder in folders for run in _run_folders(folder)]
    return sum(_sync_one(run_dir, tracking_uri, experiment, timeout) for run_dir in dict.fromkeys(runs))
