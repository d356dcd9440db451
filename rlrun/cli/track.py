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

from rlrun.config.errors import report_user_errors


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
        from rlrun.track.sync import sync_folders  # torch (SB3's logger): once the arguments are read

        left = sync_folders(args.folders, args.tracking_uri, args.experiment, args.timeout)
    sys.exit(1 if left else 0)


if __name__ == "__main__":
    main()
