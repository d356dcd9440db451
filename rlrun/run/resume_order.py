"""The order of a resume (DESIGN.md, "Folders"): the read-only trust check first, then the folder's lock, then
everything else. A refused folder is never written to: neither its ``.lock`` nor anything a link in it points at.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlrun.config.errors import UserError
from rlrun.record import regular_files, signatures


def check_before_lock(run_dir: Path) -> None:
    """What ``resume=`` checks before it takes the lock, reading only: a run folder, without a link (symbolic or
    hard) or a special file rlrun could read or write through, trusted (its signatures verify under this user's
    key)."""
    what = f"resume={run_dir}"
    if not os.path.lexists(run_dir / "run.json"):
        raise UserError(
            f"{what}: not a run folder (no run.json)",
            "give the folder of a run, e.g. resume=outputs/runs/gridworld-ppo/<stamp>",
        )
    signatures.check_folder(run_dir, what)
    regular_files.check_folder(run_dir, what)  # hard links too: the lock is taken next
