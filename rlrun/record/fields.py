"""The fields of ``run.json``, ``config.yaml``, ``eval.csv`` and snapshot manifests with the types DESIGN.md and the
schema give them, checked by every reader of a run folder it did not write itself in this process.

A received, hand-made or damaged record is never trusted to have the right shape: ``rlrun-table`` leaves such a run
out with one warning, ``resume=`` and ``rlrun-eval`` refuse it (exit 2), and either way the message names the file
and the field (:func:`record_problem`, :func:`config_problem`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rlrun.config.schema import RunConfig
from rlrun.config.upgrade import upgrade
from rlrun.record import reading
from rlrun.record.formats import EVAL_ADDED, EVAL_COLUMNS
from rlrun.record.run_record import RUN_STATUSES

Check = Callable[[Any], bool]


def _text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool): what a score, a time or a rate is."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _or_null(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _final(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict)
        and is_number(value.get("mean_return"))
        and _or_null(is_number)(value.get("success_rate"))
    )


def _versions(value: Any) -> bool:
    return value is None or (isinstance(value, dict) and all(v is None or isinstance(v, str) for v in value.values()))


# field -> (what it must be, in words; the check)
FIELDS: dict[str, tuple[str, Check]] = {
    "status": (f"one of {', '.join(RUN_STATUSES)}", lambda value: isinstance(value, str) and value in RUN_STATUSES),
    "env": ("a name (a non-empty string) or null", _or_null(_text)),
    "env_id": ("a Gymnasium id (a non-empty string)", _text),
    "algo": ("a name (a non-empty string) or null", _or_null(_text)),
    "seed": ("an integer >= 0", lambda value: _integer(value) and value >= 0),
    "config_hash": ("a non-empty string", _text),
    "overrides": ("a list of strings", _strings),
    "total_timesteps": ("an integer > 0", lambda value: _integer(value) and value > 0),
    "timesteps": ("an integer >= 0 or null", _or_null(lambda value: _integer(value) and value >= 0)),
    "wall_s": ("a number or null", _or_null(is_number)),
    "fps": ("a number or null", _or_null(is_number)),
    "final": ("null or an object with a number mean_return and a number or null success_rate", _final),
    "pid": ("an integer or null", _or_null(_integer)),
    "host": ("a string or null", _or_null(lambda value: isinstance(value, str))),
    "versions": ("an object of version strings (or nulls) or null", _versions),
    "git": ("a string or null", _or_null(lambda value: isinstance(value, str))),
    "command": ("a string or null", _or_null(lambda value: isinstance(value, str))),
    "resumes": ("a list", lambda value: isinstance(value, list)),
}
# What every reader needs: a record without one of these cannot be grouped, resumed or reported.
REQUIRED = ("status", "env_id", "seed", "config_hash", "overrides", "total_timesteps")


def shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def as_text(value: Any) -> str:
    """A name from a record (an env, an override, a host, a folder) as text to show: ``str(value)`` with each
    character that is not printable (control characters such as a newline or a terminal's escape, line and
    paragraph separators, direction marks) escaped as Python writes it (``\\n``, ``\\x1b``), so that it can
    neither clear or move a terminal's screen nor break a line of a table."""
    text = str(value)
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def record_problem(record: Any, required: Iterable[str] = REQUIRED) -> str | None:
    """What makes ``record`` (a parsed ``run.json``) unusable, naming the field: a field of ``required`` that is
    missing, or any field of :data:`FIELDS` of the wrong type; None when it can be used."""
    if not isinstance(record, dict):
        return f"run.json holds {type(record).__name__} {shown(record)}, not an object"
    for field in required:
        if field not in record:
            return f"run.json has no {field!r} (it must be {FIELDS[field][0]})"
    for field, (allowed, check) in FIELDS.items():
        if field in record and not check(record[field]):
            return f"run.json's {field!r} is {shown(record[field])}, not {allowed}"
    return None


def config_problem(cfg: Any) -> str | None:
    """What makes a run's loaded ``config.yaml`` unusable, naming the key: a value of a type the schema
    (:class:`rlrun.config.schema.RunConfig`) does not allow there, or a required key that is missing; None when
    it can be used. Keys the schema does not know (``logger``, ...) are left to their readers."""
    schema = OmegaConf.structured(RunConfig)
    OmegaConf.set_struct(schema, False)  # the run's own keys beyond the schema's are kept, not refused
    try:
        merged = OmegaConf.merge(schema, cfg)
        missing = sorted(OmegaConf.missing_keys(merged))
    except OmegaConfBaseException as error:
        key = f"'{error.full_key}'" if error.full_key else "its top level"
        reason = str(error.msg if getattr(error, "msg", None) else error).splitlines()[0]
        return f"config.yaml: {key} has a value of the wrong type ({reason})"
    if missing:
        return f"config.yaml has no {missing[0]!r}"
    return None


def read_config(run_dir: Path) -> tuple[DictConfig | None, str | None]:
    """A run folder's ``config.yaml``, upgraded if an older rlrun wrote it, and what makes it unusable (None when
    nothing does; then the config is not None)."""
    try:
        loaded = OmegaConf.create(reading.checked_yaml(run_dir / "config.yaml")[0])  # within bounds first
    except (OSError, ValueError, yaml.YAMLError, OmegaConfBaseException) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return None, f"config.yaml cannot be read ({reason})"
    if not isinstance(loaded, DictConfig):
        return None, "config.yaml holds a list, not a mapping"
    cfg = upgrade(loaded)
    return cfg, config_problem(cfg)


# eval.csv's columns (DESIGN.md): what each value must be, in words, and the check of its text.
def _float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# eval.csv's columns (formats.EVAL_COLUMNS, the one list of them) -> what each holds and its check
EVAL_FIELDS: dict[str, tuple[str, Callable[[str], bool]]] = dict(
    zip(
        EVAL_COLUMNS,
        (
            ("an integer >= 0", lambda text: text.isascii() and text.isdigit()),  # timesteps
            ("a number", _float_text),  # mean_return
            ("a number", _float_text),  # std_return
            ("a number or empty", lambda text: text == "" or _float_text(text)),  # success_rate
            ("a number", _float_text),  # wall_s
            ("an integer >= 0 or empty", lambda text: text == "" or (text.isascii() and text.isdigit())),  # capped
        ),
        strict=True,
    )
)

# the columns every eval.csv has, those written before the added ones too
EVAL_REQUIRED = tuple(column for column in EVAL_FIELDS if column not in EVAL_ADDED)


def eval_csv_rows(text: str) -> list[dict[str, str]]:
    """The rows of an ``eval.csv``'s text as column -> text, each value checked for its type, blank lines skipped.
    What follows the last newline is a row still being written (or cut short by a kill) and is left out.

    Raises ValueError naming the line and the column (``eval.csv line 3: 'timesteps' is 'x', not an integer >= 0``)
    when the header lacks a column or a complete row does not parse. The columns added since the first eval.csv
    (:data:`~rlrun.record.formats.EVAL_ADDED`), which a file written before lacks, are read as empty.
    """
    lines = text[: text.rfind("\n") + 1].splitlines()
    if not lines:
        return []  # nothing complete yet, not even the header
    header = next(csv.reader([lines[0]]))
    if not set(EVAL_REQUIRED) <= set(header):
        raise ValueError(f"eval.csv line 1: the header {shown(lines[0])} lacks one of {', '.join(EVAL_REQUIRED)}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            values = next(csv.reader([line]))
        except csv.Error as error:
            raise ValueError(f"eval.csv line {number} cannot be parsed ({error})") from None
        if len(values) != len(header):
            raise ValueError(f"eval.csv line {number} has {len(values)} values, not {len(header)}: {shown(line)}")
        row = dict.fromkeys(EVAL_ADDED, "") | dict(zip(header, values, strict=True))
        for column, (allowed, check) in EVAL_FIELDS.items():
            if not check(row[column]):
                raise ValueError(f"eval.csv line {number}: {column!r} is {shown(row[column])}, not {allowed}")
        rows.append(row)
    return rows


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
    """The rows of a whole ``eval.csv`` in file order, blank lines skipped, each value checked
    (:func:`eval_csv_rows`).

    Raises ValueError, its message saying what is wrong (and on which line), when the header lacks a column or a
    row does not parse.
    """
    if not text.strip():
        raise ValueError(f"eval.csv lacks the header {','.join(EVAL_REQUIRED)}")
    whole = text if text.endswith("\n") else text + "\n"  # a finished file: its last row counts too
    return [_eval_row(row) for row in eval_csv_rows(whole)]


def eval_csv_problem(path: Path) -> str | None:
    """What makes the ``eval.csv`` at ``path`` unusable (:func:`eval_csv_rows`), naming the line; None when it
    can be used or does not exist."""
    try:
        text = reading.read_text(path, reading.MAX_CSV_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return f"eval.csv cannot be read ({error})"
    try:
        eval_csv_rows(text)
    except ValueError as error:
        return str(error)
    return None


def _sha256_hex(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _file_name(value: Any) -> bool:
    return isinstance(value, str) and value not in ("", ".", "..") and "/" not in value and "\\" not in value


def manifest_problem(data: Any) -> str | None:
    """What makes a snapshot's parsed ``manifest.json`` unusable, naming the field: ``step`` an integer >= 0,
    ``score`` a number or null, ``files`` an object of file names (in the snapshot's folder) to sha256 digests;
    None when it can be used."""
    if not isinstance(data, dict):
        return f"manifest.json holds {type(data).__name__} {shown(data)}, not an object"
    step = data.get("step")
    if not (isinstance(step, int) and not isinstance(step, bool) and step >= 0):
        return f"manifest.json's 'step' is {shown(step)}, not an integer >= 0"
    score = data.get("score")  # a NaN score (an evaluation that returned NaN) is a real one
    if not (score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))):
        return f"manifest.json's 'score' is {shown(score)}, not a number or null"
    files = data.get("files")
    if not isinstance(files, dict) or not all(_file_name(k) and _sha256_hex(v) for k, v in files.items()):
        return f"manifest.json's 'files' is {shown(files)}, not an object of file names to sha256 hex digests"
    return None
