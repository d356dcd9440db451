"""User mistakes: one message that names the problem and the fix, exit status 2, no traceback.

Every rlrun command wraps its body in :func:`report_user_errors`, so this is the one place that
decides how a mistake is shown. ``HYDRA_FULL_ERROR=1`` re-raises with the full traceback (with the exception it
was raised from, where one caused it). :func:`innermost_outside` names where a failure from other code (an env, a
library, SB3) started, so a message can point at that line without a traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

RLRUN_DIR = Path(__file__).resolve().parents[1]  # the runner's own code; rlrun.envs lives outside it (envs/)

USER_ERROR_STATUS = 2
Problem = tuple[str, str]  # (what is wrong, how to fix it): what each check of rlrun.checks.rules returns


class UserError(Exception):
    """A mistake the user can fix: a bad value, an incompatible pair, a bad path."""

    status = USER_ERROR_STATUS  # the exit status; a subclass for Hydra's kind of mistake keeps Hydra's

    def __init__(self, problem: str, fix: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return self.problem if self.fix is None else f"{self.problem}\n  fix: {self.fix}"


def raise_if(problems: list[Problem]) -> None:
    """Raise one :class:`UserError` listing every problem with its fix."""
    if not problems:
        return
    if len(problems) == 1:
        raise UserError(*problems[0])
    lines = "\n".join(f"  - {problem}\n    fix: {fix}" for problem, fix in problems)
    raise UserError(f"{len(problems)} problems in the config:\n{lines}")


def full_traceback_wanted() -> bool:
    """Whether ``HYDRA_FULL_ERROR=1`` asks for the full traceback instead of rlrun's message (the one place
    rlrun reads it; Hydra reads it for its own errors)."""
    return os.environ.get("HYDRA_FULL_ERROR") == "1"


@contextmanager
def report_user_errors(prog: str = "rlrun") -> Iterator[None]:
    """Turn a :class:`UserError` raised inside the block into a message and its exit status (2)."""
    try:
        yield
    except UserError as error:
        if full_traceback_wanted():
            raise
        print(f"{prog}: error: {error}", file=sys.stderr)
        sys.exit(error.status)


def innermost_outside(tb: TracebackType | None) -> str | None:
    """``file:line`` of the innermost frame of ``tb`` that is not rlrun's own code (the runner's, not
    ``rlrun.envs``): where an env, a library or SB3 raised. Python's standard library counts only where no other
    frame is left (a pipe to a worker process that broke). None when every frame is rlrun's."""
    found: dict[bool, str] = {}  # in the standard library or not -> the innermost such frame
    for frame in traceback.extract_tb(tb):
        if not Path(frame.filename).resolve().is_relative_to(RLRUN_DIR):
            found[in_standard_library(frame.filename)] = f"{frame.filename}:{frame.lineno}"
    return found.get(False, found.get(True))


def in_standard_library(filename: str) -> bool:
    """Whether a source file is Python's own (not an installed package's, wherever those are)."""
    import sysconfig

    path = Path(filename).resolve()
    installed = {"site-packages", "dist-packages"} & set(path.parts)
    return path.is_relative_to(Path(sysconfig.get_paths()["stdlib"]).resolve()) and not installed


def raised_at(error: BaseException) -> str:
    """`` (raised at file:line)`` for :func:`innermost_outside` of ``error``, or nothing."""
    where = innermost_outside(error.__traceback__)
    return f" (raised at {where})" if where else ""
