"""``rlrun-track sync RUN_DIR...``: send to MLflow what runs could not send, or import runs trained without it.

Each folder given is a run folder, or a folder of runs (a sweep's, a study's, ``outputs/``). The MLflow store
is the one the run logged to (run.json's ``tracking.mlflow``), else its config's ``logger.mlflow`` settings,
else the SQLite store ``mlflow.db`` of its outputs folder; ``--tracking-uri`` and ``--experiment`` choose
others. Idempotent (:mod:`rlrun.track.sync`): a second sync sends nothing twice.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rlrun.config.errors import UserError, report_user_errors
from rlrun.process import bootstrap


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


@bootstrap.entry
def main(argv: Sequence[str] | None = None) -> None:
    """``rlrun-track sync``: one line per run; exit 1 when something could not be sent."""
    parser = argparse.ArgumentParser(prog="rlrun-track", description="Experiment tracking of rlrun's runs.")
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser(
        "sync",
        help="send what runs could not send to MLflow, or import runs trained without it",
        description="Send each run's tracking-unsent.jsonl to MLflow, or import a run that has no MLflow run.",
    )
    sync.add_argument("folders", nargs="+", type=Path, metavar="RUN_DIR", help="run folder, or a folder of runs")
    sync.add_argument("--tracking-uri", help="MLflow tracking URI (default: the run's own, else outputs/mlflow.db)")
    sync.add_argument("--experiment", help="MLflow experiment of imported runs (default: the run's, else rlrun)")
    args = parser.parse_args(argv)
    with report_user_errors("rlrun-track"):
        from rlrun.track.sync import sync_run

        runs = [run for folder in args.folders for run in _runs(folder)]
        left = 0
        for run_dir in dict.fromkeys(runs):
            run_id, unsent = sync_run(run_dir, args.tracking_uri, args.experiment)
            left += unsent
            state = f"{unsent} operations still unsent" if unsent else "in MLflow"
            print(f"{run_dir}: MLflow run {run_id}: {state}")
    sys.exit(1 if left else 0)


if __name__ == "__main__":
    main()
