"""What Hydra leaves of a run that never started: it writes ``.hydra/`` and the log into the run folder
before rlrun runs, so a run refused or stopped before it wrote ``run.json`` would leave a folder that looks
like a run but is none. Both ``rlrun`` (a single run) and a stopped sweep (jobs it never started) remove it.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path


def remove_leftovers(run_dir: Path, before: Collection[str] | None = None) -> bool:
    """Remove what Hydra made in ``run_dir`` for a run that never started (no ``run.json``): its ``.hydra/``
    and log, and the folder itself once empty, unless it existed before (``before``: the names it held then,
    never removed). Nothing is removed where anything else was written. Whether the folder itself was removed.
    """
    if (run_dir / "run.json").exists() or not run_dir.is_dir():
        return False
    made = [path for path in run_dir.iterdir() if before is None or path.name not in before]
    if not all(path.name == ".hydra" or path.suffix == ".log" for path in made):
        return False  # something else was written: keep everything
    for path in made:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    if before is None and not any(run_dir.iterdir()):
        run_dir.rmdir()
        return True
    return False
