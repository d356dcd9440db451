"""Cancelling a stopped sweep's SLURM jobs that have not started yet.

Hydra's submitit launcher submits a sweep's jobs as one SLURM array and keeps the job handles to itself, so
when the sweep is stopped the jobs still queued are found where submitit records them: its folder
(``hydra.launcher.submitit_folder``, by default ``<sweep>/.submitit/%j``) holds one folder per submitted job,
named by its SLURM id (``<array id>_<task>``). ``scancel --state=PENDING <array id>`` then cancels the
array's tasks that are still waiting and leaves the running ones, which stop at their next boundary through
the sweep's stop marker (:data:`rlrun.sweep.job.STOP_FILE`) with a snapshot.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from omegaconf import DictConfig

SLURM_LAUNCHER = "SlurmLauncher"  # hydra_plugins.hydra_submitit_launcher's class for submitit_slurm
JOB_FOLDER = re.compile(r"(\d+)(?:_\d+)?")  # a job's folder name in submitit's folder: <job id> or <array>_<task>
SCANCEL_TIMEOUT_S = 30.0


def queued_job_canceller(launcher: DictConfig) -> Callable[[], None] | None:
    """What cancels the sweep's queued SLURM jobs, for a submitit SLURM launcher's config; None for others."""
    if not str(launcher.get("_target_", "")).endswith(SLURM_LAUNCHER) or "submitit_folder" not in launcher:
        return None
    folder = Path(str(launcher.submitit_folder))
    root = folder.parent if "%" in folder.name else folder  # ".submitit/%j": one folder per job below
    return lambda: cancel_queued(root)


def submitted_arrays(root: Path) -> list[str]:
    """The SLURM job (or array) ids submitit has submitted from ``root``, oldest first."""
    if not root.is_dir():
        return []
    ids = {int(match.group(1)) for entry in root.iterdir() if (match := JOB_FOLDER.fullmatch(entry.name))}
    return [str(job_id) for job_id in sorted(ids)]


def cancel_queued(root: Path) -> None:
    """``scancel --state=PENDING`` every array submitted from ``root``: the tasks not started are dropped from
    the queue; running ones are not touched (they stop through the stop marker)."""
    arrays = submitted_arrays(root)
    if not arrays:
        return
    command = ["scancel", "--state=PENDING", *arrays]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SCANCEL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"rlrun: could not cancel the queued SLURM jobs ({' '.join(command)}): {error}", file=sys.stderr)
        return
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        print(f"rlrun: could not cancel the queued SLURM jobs ({' '.join(command)}): {reason[0]}", file=sys.stderr)
        return
    print(f"rlrun: cancelled the sweep's SLURM jobs not started yet ({' '.join(command)})", file=sys.stderr)
