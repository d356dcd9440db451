"""How big a sweep may be without a second thought: above :data:`CONFIRM_ABOVE` jobs (``seed=range(1000)`` typed
for ``range(10)``), the sweep asks before composing anything, on a terminal; without one, it is refused
unless ``sweep_yes=true`` says the size is meant (a key that changes nothing the jobs train)."""

from __future__ import annotations

import sys

from rlrun.config.errors import UserError

CONFIRM_ABOVE = 200  # jobs; the preset benchmark (13 pairs x 10 seeds) stays below it


def confirm(count: int, yes: bool) -> None:
    """Let a sweep of ``count`` jobs go on: at most :data:`CONFIRM_ABOVE`, or ``yes`` (``sweep_yes=true``), or the
    user answers y on the terminal; else a user mistake (exit 2) before anything is composed or written."""
    if count <= CONFIRM_ABOVE or yes:
        return
    fix = "sweep_yes=true, if that many jobs are meant (it changes nothing the jobs train); else sweep fewer values"
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError(f"a sweep of {count} jobs is more than {CONFIRM_ABOVE}, and there is no terminal to ask", fix)
    try:
        answer = input(f"a sweep of {count} jobs (more than {CONFIRM_ABOVE}): start it? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise UserError(f"a sweep of {count} jobs was not confirmed", fix)
