"""Formats of a run folder's files (DESIGN.md, "The run-directory contract") and how they are written and read:
atomically, so a reader sees the old file or the new one, never a mix. Importable without torch.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVAL_CSV_HEADER = "timesteps,mean_return,std_return,success_rate,wall_s\n"
EVAL_COLUMNS = tuple(EVAL_CSV_HEADER.strip().split(","))
# <job>/attempts/<k>/: a sweep job's earlier, failed attempts (and a study's unfinished validation runs); tables
# never read runs under it
ATTEMPTS = "attempts"


@dataclass(frozen=True)
class EvalRow:
    """One periodic evaluation of ``eval.csv``, the columns tables and studies read."""

    timesteps: int
    mean_return: float
    success_rate: float | None


def _eval_row(row: dict[str, Any]) -> EvalRow:
    success = row["success_rate"]
    return EvalRow(int(row["timesteps"]), float(row["mean_return"]), float(success) if success else None)


def parse_eval_csv(text: str) -> list[EvalRow]:
    """The rows of an ``eval.csv`` in file order, blank lines skipped.

    Raises ValueError, its message saying what is wrong, when the header lacks a column or a row does not parse.
    """
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames
        rows = None
        if header is not None and set(EVAL_COLUMNS) <= set(header):
            rows = [_eval_row(row) for row in reader]
    except (ValueError, TypeError, csv.Error) as error:
        raise ValueError(f"eval.csv cannot be parsed ({error})") from None
    if rows is None:
        raise ValueError(f"eval.csv lacks the header {','.join(EVAL_COLUMNS)}")
    return rows


def now() -> str:
    """The local time in ISO 8601 with its UTC offset, as run.json records times."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def write_text(path: Path, text: str, durable: bool = False) -> None:
    """Write ``text`` under a temporary name, then rename it over ``path`` (``durable``: fsync'd first)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a JSON object atomically and durably."""
    write_text(path, json.dumps(data, indent=2) + "\n", durable=True)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None where it is missing, truncated or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
