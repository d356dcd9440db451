"""A run that stopped with an exception, explained (:func:`explained`): one message saying what happened, where
the run can continue from and a fix, and DESIGN.md's exit status for it."""

from __future__ import annotations

from pathlib import Path

from rlrun.config.errors import full_traceback_wanted
from rlrun.make.gym_make import failure_fix
from rlrun.make.nan import NonFiniteValue
from rlrun.record.formats import WriteFailed
from rlrun.record.provenance import prog
from rlrun.run.interrupts import RunInterrupted


def explained(error: BaseException, run_dir: Path, env_id: str) -> tuple[str, int]:
    """A run that stopped with ``error``: its message (what happened, where it can continue from, a fix) and
    its exit status. Re-raises what it does not know, and everything with ``HYDRA_FULL_ERROR=1``."""
    if isinstance(error, RunInterrupted):
        return f"rlrun: {error}; snapshot written. Continue with:\n  {prog()} resume={error.run_dir}", error.exit_status
    if isinstance(error, KeyboardInterrupt):  # a third signal: no snapshot at this point, the newest one is kept
        return (
            "rlrun: stopped at once, without a snapshot of this step; run.json says interrupted. "
            f"Continue from its newest snapshot, if it has one, with:\n  {prog()} resume={run_dir}",
            130,
        )
    if not isinstance(error, Exception):
        raise error
    if isinstance(error, NonFiniteValue):
        return f"rlrun: run failed: {error}\nrun.json records it; snapshots so far are kept in {run_dir}", 1
    if isinstance(error, WriteFailed):  # a full disk, a quota, a read-only filesystem: one line, no traceback
        if (run_dir / "run.json").is_file() and any((run_dir / "snapshots").glob("step-*")):
            then = f"free space, then continue from its newest complete snapshot with: {prog()} resume={run_dir}"
        else:
            then = "free space, then start it again"
        return f"rlrun: run failed: {error}; {then}", 1
    if full_traceback_wanted():
        raise error
    at, fix = failure_fix(error, env_id)  # the env or the algorithm failed while training: where, and a fix
    recorded = f"\nrun.json in {run_dir} records it" if (run_dir / "run.json").is_file() else ""
    return f"rlrun: run failed: {type(error).__name__}: {error}{at}\n  fix: {fix}{recorded}", 1
