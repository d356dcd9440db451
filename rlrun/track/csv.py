"""``logger=[..., csv]``: SB3's scalars and rlrun's evaluations as ``<run_dir>/progress.csv``, one row per dump.

SB3's ``CSVOutputFormat`` truncates its file when opened, and its rows carry no step. Here each row starts
with the env ``step`` it was written at, and a resumed run keeps the rows up to its snapshot's step (those
after it, written by the stopped session, are written again as training repeats them).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from stable_baselines3.common.logger import CSVOutputFormat, KVWriter

from rlrun.track.base import Tracker

STEP = "step"  # the first column: the env step of the row


class ProgressCsv(CSVOutputFormat):
    """SB3's CSV writer with the env step as the first column, continuing the rows ``kept`` from an earlier
    session of the run."""

    def __init__(self, filename: str, kept: list[dict[str, str]] | None = None) -> None:
        super().__init__(filename)  # truncates the file
        if kept:
            self.keys = list(kept[0])
            writer = csv.DictWriter(self.file, fieldnames=self.keys, quotechar=self.quotechar, lineterminator="\n")
            writer.writeheader()
            writer.writerows(kept)
            self.file.flush()

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        if STEP not in self.keys:  # the first column (SB3 adds new keys in no set order)
            self.keys.insert(0, STEP)
        super().write({STEP: step, **key_values}, {STEP: (), **key_excluded}, step)


def kept_rows(path: Path, resumed_from: int) -> list[dict[str, str]]:
    """The rows of an earlier session's ``progress.csv`` at or before ``resumed_from`` (all columns kept)."""
    if not path.is_file():
        return []
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    return [row for row in rows if row.get(STEP, "").isdigit() and int(row[STEP]) <= resumed_from]


class Csv(Tracker):
    """SB3's scalars into a CSV file of the run folder (no service)."""

    name = "csv"

    def __init__(self, filename: str = "progress.csv") -> None:
        self.filename = filename

    def output_format(self, run_dir: Path, resumed_from: int | None) -> KVWriter:
        path = run_dir / self.filename
        kept = kept_rows(path, resumed_from) if resumed_from is not None else None
        return ProgressCsv(str(path), kept)
