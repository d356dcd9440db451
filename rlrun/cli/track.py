"""``rlrun-track sync RUN_DIR...``: send what runs could not send to MLflow or W&B, or import runs trained
without a tracker into MLflow.

Each folder given is a run folder, or a folder of runs (a sweep's, a study's, ``outputs/``). A run goes to the
services it logged to (run.json's ``tracking``); one that logged to none is imported into MLflow. The MLflow
store is the one the run logged to (``tracking.mlflow``), else its config's ``logger.mlflow`` settings, else the
SQLite store ``mlflow.db`` of its outputs folder; ``--tracking-uri`` and ``--experiment`` choose others.
Idempotent (:mod:`rlrun.track.sync`): a second sync sends nothing twice. W&B's offline sessions are uploaded
with W&B's own ``wandb sync`` (the machine's credentials), stopped after ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rlrun.config.errors import UserError, report_user_errors
from rlrun.record.formats import read_json


def _runs(folder: Path) -> list[Path]:
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


def _sync(run_dir: Path, args: argparse.Namespace) -> int:
    """Sync one run to each of its services; how many operations (MLflow) or sessions (W&B) are left unsent."""
    left = 0
    for service in _services(run_dir):
        if service == "wandb":
            from rlrun.track.wandb import upload

            status = upload(run_dir, args.timeout)
            left += status != 0
            state = "uploaded" if status == 0 else f"not uploaded (wandb sync exited {status})"
            print(f"{run_dir}: W&B: {state}")
            continue
        from rlrun.track.sync import sync_run

        run_id, unsent = sync_run(run_dir, args.tracking_uri, args.experiment)
        left += unsent
        state = f"{unsent} operations still unsent" if unsent else "in MLflow"
        print(f"{run_dir}: MLflow run {run_id}: {state}")
    return left


def main(argv: Sequence[str] | None = None) -> None:
    """``rlrun-track sync``: one line per run; exit 1 when something could not be sent."""
    parser = argparse.ArgumentParser(prog="rlrun-track", description="Experiment tracking of rlrun's runs.")
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser(
        "sync",
        help="send what runs could not send to MLflow or W&B, or import runs trained without a tracker",
        description="Send each run's tracking-unsent.jsonl to MLflow and upload its offline W&B sessions, or "
        "import a run that logged to no tracker into MLflow.",
    )
    sync.add_argument("folders", nargs="+", type=Path, metavar="RUN_DIR", help="run folder, or a folder of runs")
    sync.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else outputs/mlflow.db; never one the folder names)",
    )
    sync.add_argument("--experiment", help="MLflow experiment of imported runs (default: the run's, else rlrun)")
    sync.add_argument(
        "--timeout", type=float, default=600.0, help="seconds wandb sync may take per run (it retries a dead server)"
    )
    args = parser.parse_args(argv)
    with report_user_errors("rlrun-track"):
        runs = [run for folder in args.folders for run in _runs(folder)]
        left = sum(_sync(run_dir, args) for run_dir in dict.fromkeys(runs))
    sys.exit(1 if left else 0)


if __name__ == "__main__":
    main()
