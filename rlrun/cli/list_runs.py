"""``rlrun-runs [FOLDER...]``: the runs under the folders (default ``outputs/``), each with its status, steps,
scores, age and the command that continues it (:mod:`rlrun.table.run_list`)."""

import argparse
from pathlib import Path

from rlrun.config.errors import report_user_errors
from rlrun.table.run_list import DESCRIPTION, show


def main() -> None:
    """Console-script entry point: print the list."""
    parser = argparse.ArgumentParser(prog="rlrun-runs", description=DESCRIPTION)
    parser.add_argument("folders", nargs="*", type=Path, default=[Path("outputs")], metavar="FOLDER")
    with report_user_errors("rlrun-runs"):
        show(parser.parse_args().folders)
