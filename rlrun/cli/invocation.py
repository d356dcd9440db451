"""What ``rlrun`` learns from its command line before Hydra runs: the checks made there, what the run's folder
held before, and the run ``resume=`` continues, loaded and verified once (:class:`Invocation`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlrun.cli.command_line import CommandLine, text
from rlrun.config.errors import UserError
from rlrun.config.keys import RESUME_OVERRIDES
from rlrun.record import lock, nearest_runs, signatures
from rlrun.record.run_record import refuse_existing_run
from rlrun.run import resume_order


@dataclass(frozen=True)
class Invocation:
    """This process's command line, checked, and what it found before Hydra ran, for Hydra's task function."""

    command: CommandLine
    existing: frozenset[str] | None = None  # what hydra.run.dir held before Hydra wrote there: the user's, kept
    existing_parents: frozenset[Path] = field(default_factory=frozenset)  # outputs/runs/<env>-<algo> already there
    resumed: tuple[dict[str, Any], Path] | None = None  # resume=: the run's record and the snapshot to continue

    @classmethod
    def read(cls, command: CommandLine) -> Invocation:
        """Note what ``hydra.run.dir`` holds before Hydra writes there and which folders of the default layout
        exist; for ``resume=``, check the run and take its lock (raise :class:`UserError` for a mistake)."""
        signatures.check_key()  # before Hydra creates the run folder
        target = command.value("hydra.run.dir")
        if target and command.value("resume") is None:
            refuse_existing_run(Path(str(target)))  # a new run pointed at an existing run's folder
        existing = frozenset(p.name for p in Path(target).iterdir()) if target and Path(target).is_dir() else None
        runs = Path("outputs", "runs").resolve()
        parents = {p for p in (runs.parent, runs) if p.is_dir()}
        if runs.is_dir():
            parents.update(p for p in runs.iterdir() if p.is_dir())
        return cls(command, existing, frozenset(parents), _resumed(command))

    def hydra_argv(self) -> list[str]:
        """What Hydra reads: the command line and, for ``resume=``, the run's own folder, without letting Hydra
        write a new ``.hydra`` record there."""
        argv = list(self.command.argv)
        if self.resumed is None:
            return argv
        return [*argv, f"hydra.run.dir={self.command.value('resume')}", "hydra.output_subdir=null"]


def _resumed(command: CommandLine) -> tuple[dict[str, Any], Path] | None:
    """For ``resume=<run_dir>``: check the target and the other overrides and take the run's lock before
    Hydra creates anything; the run's record and snapshot. A completed run ends the process here (status 0)."""
    target = command.value("resume")
    if target is None or target == "":
        return None
    run_dir = Path(str(target))
    if not run_dir.is_dir():
        raise UserError(f"resume={target}: no such folder", nearest_runs.resume_fix(run_dir))
    refused = [text(o) for o in command.parsed if o.key_or_group not in RESUME_OVERRIDES]
    if refused:
        raise UserError(
            "resume= continues a run with its own config.yaml; refusing overrides that change it: " + " ".join(refused),
            "drop them (only progress_bar= and progress_every= may change, and total_timesteps= to a larger"
            " budget), or start a new run with them",
        )
    resume_order.check_before_lock(run_dir)  # read-only, and before torch is imported: a refusal is instant
    lock.hold(run_dir)  # held until this process ends; a second resume of the run is refused here
    from rlrun.run import continuation, resume_state  # torch and SB3: for a run that will be resumed

    total = command.value("total_timesteps")  # a continuation to a larger budget, completed runs too
    if total is None:
        record, snapshot = resume_state.load_target(run_dir)
    else:
        record, snapshot = continuation.target(run_dir, continuation.budget(total, run_dir))
    if snapshot is None:
        final = record["final"]
        score = f" (mean return {final['mean_return']:.3f})" if final else ""
        print(f"{run_dir} is already completed{score}; nothing to do")
        sys.exit(0)
    return record, snapshot
