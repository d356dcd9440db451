"""The order of a resume (DESIGN.md, "Folders"): the read-only trust check first, then the folder's lock, then
everything else. A refused folder is never written to: neither its ``.lock`` nor anything a link in it points at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record import lock, regular_files, signatures
from rlrun.run import resume_state


def check_before_lock(run_dir: Path) -> None:
    """What ``resume=`` checks before it takes the lock, reading only: a run folder, trusted (its signatures
    verify under this user's key), without a link rlrun could write through."""
    what = f"resume={run_dir}"
    if not (run_dir / "run.json").is_file():
        raise UserError(
            f"{what}: not a run folder (no run.json)",
            "give the folder of a run, e.g. resume=outputs/runs/gridworld-ppo/<stamp>",
        )
    signatures.check_folder(run_dir, what)
    links = regular_files.links_in(run_dir)
    if links:
        raise UserError(
            f"{what}: the folder holds symbolic links, which rlrun never writes: "
            + ", ".join(str(link.relative_to(run_dir)) for link in links[:5]),
            "replace each by the file it points to (or remove it); a folder you received may be trying to make "
            "rlrun write outside it",
        )


def hold_for_resume(run_dir: Path) -> tuple[dict[str, Any], Path | None]:
    """``resume=<run_dir>`` in its order: :func:`check_before_lock`, then the lock, held for the rest of this
    process, then the record and the snapshot to continue from (:func:`rlrun.run.resume_state.load_target`)."""
    check_before_lock(run_dir)
    lock.hold(run_dir)  # a second resume of the run is refused here, exit 2, naming the lock's holder
    return resume_state.load_target(run_dir)
