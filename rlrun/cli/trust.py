"""``rlrun-trust RUN_DIR...`` (``python -m rlrun.cli.trust``): sign run folders the user has reviewed.

A folder rlrun did not write under this user's trust key (received from someone, written by rlrun before it
signed run folders, or altered since) is refused by ``resume=``, ``rlrun-eval`` and ``rlrun.load_run``, since
loading it would unpickle its files and instantiate its ``config.yaml``. Signing it says: I have looked, and
it may run here (:mod:`rlrun.record.signatures`). A sweep's or a study's folder signs every run folder under it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rlrun.config.errors import UserError, report_user_errors
from rlrun.record import signatures


def _runs(folders: list[Path]) -> list[Path]:
    """The run folders given, or under the folders given (a sweep's, a study's)."""
    runs: list[Path] = []
    for folder in folders:
        if not folder.is_dir():
            raise UserError(f"{folder}: no such folder", "give a run folder, e.g. outputs/runs/<env>-<algo>/<run>")
        found = signatures.run_folders(folder)
        if not found:
            raise UserError(
                f"{folder} holds no run folder (no run.json or config.yaml in it or under it)",
                "give a run folder, or a sweep's folder under outputs/sweeps/",
            )
        runs += found
    for run_dir in runs:  # before anything is read: a FIFO is never waited on, a hard link never signed
        signatures.check_reviewable(run_dir, f"rlrun-trust {run_dir}")  # nor a config.yaml that is no data
    return list(dict.fromkeys(runs))


def _confirmed(runs: list[Path], yes: bool) -> bool:
    """Show what each folder will run once trusted, then ask (on a terminal) unless ``--yes``."""
    for run_dir in runs:
        executed = signatures.executed_by(run_dir)
        print(f"{run_dir} will run, once trusted:")
        print("\n".join(f"  {item}" for item in executed) or "  nothing (no pickle, no _target_)")
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UserError(
            "rlrun-trust asks before it signs, and there is no terminal to ask on",
            "review what is listed above, then run again with --yes",
        )
    answer = input(f"Trust {'these folders' if len(runs) > 1 else 'this folder'}? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def main(argv: Sequence[str] | None = None) -> None:
    """List what each folder given (or each run folder under it) will run, ask, sign, then say what was signed."""
    parser = argparse.ArgumentParser(
        prog="rlrun-trust",
        description="Trust run folders you have reviewed: resume=, rlrun-eval and rlrun.load_run may then load "
        "their pickles and instantiate their config.yaml. Lists what they will run and asks first.",
        epilog=f"Signs with the key in ${signatures.KEY_ENV}, else $XDG_CONFIG_HOME/rlrun/trust.key.",
    )
    parser.add_argument("folders", nargs="+", type=Path, metavar="RUN_DIR", help="run folder, or a folder of runs")
    parser.add_argument("--yes", action="store_true", help="sign without asking (needed without a terminal)")
    args = parser.parse_args(argv)
    with report_user_errors("rlrun-trust"):
        runs = _runs(args.folders)
        signatures.check_key()  # a file readable by its owner only (not a folder), before anything is shown
        if not _confirmed(runs, args.yes):
            print("nothing signed")
            sys.exit(1)
        for run_dir in runs:
            count = signatures.trust_folder(run_dir)
            print(f"trusted {run_dir} ({count} snapshot{'s' if count != 1 else ''})")
    sys.exit(0)


if __name__ == "__main__":
    main()
