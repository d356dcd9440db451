"""What ``rlrun`` learns from its command line before Hydra runs: the checks made there, what the run's folder
held before, and the run ``resume=`` continues, loaded and verified once (:class:`Invocation`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlrun.cli import command_line, mistakes
from rlrun.cli.command_line import CommandLine
from rlrun.config import schema, user_configs
from rlrun.config.errors import UserError
from rlrun.config.keys import RESUME_OVERRIDES, override_key
from rlrun.record import signatures


@dataclass(frozen=True)
class Invocation:
    """This process's command line, checked, and what it found before Hydra ran, for Hydra's task function."""

    command: CommandLine
    existing: frozenset[str] | None = None  # what hydra.run.dir held before Hydra wrote there: the user's, kept
    existing_parents: frozenset[Path] = field(default_factory=frozenset)  # outputs/runs/<env>-<algo> already there
    resumed: tuple[dict[str, Any], Path] | None = None  # resume=: the run's record and the snapshot to continue

    @classmethod
    def read(cls, command: CommandLine) -> Invocation:
        """Check ``command`` (raise :class:`UserError` for a mistake), and note what ``hydra.run.dir`` holds
        before Hydra writes there and which folders of the default layout exist."""
        _refuse_multirun_with_a_view(command.argv)
        _refuse_a_sweep_without_multirun(command)
        command_line.check_launcher_extras(command)  # first: a launcher whose extra is missing is no unknown option
        command = mistakes.check(command, schema.RunConfig)
        command_line.check_benchmark_part(command)
        command_line.check_output_folders(command)
        signatures.check_key()  # before Hydra creates the run folder
        target = command.value("hydra.run.dir")
        if target and command.value("resume") is None:
            from rlrun.record.run_record import refuse_existing_run

            refuse_existing_run(Path(target))  # a new run pointed at an existing run's folder
        existing = frozenset(p.name for p in Path(target).iterdir()) if target and Path(target).is_dir() else None
        runs = Path("outputs", "runs").resolve()
        parents = {p for p in (runs.parent, runs) if p.is_dir()}
        if runs.is_dir():
            parents.update(p for p in runs.iterdir() if p.is_dir())
        return cls(command, existing, frozenset(parents), _resumed(command))

    def hydra_argv(self) -> list[str]:
        """What Hydra reads: the command line (as checked; the user's ``--config-dir`` searched first) and, for
        ``resume=``, the run's own folder, without letting Hydra write a new ``.hydra`` record there."""
        argv = user_configs.user_configs_first(self.command.argv)
        if self.resumed is None:
            return argv
        return [*argv, f"hydra.run.dir={self.command.value('resume')}", "hydra.output_subdir=null"]


def _resumed(command: CommandLine) -> tuple[dict[str, Any], Path] | None:
    """For ``resume=<run_dir>``: check the target and the other overrides and take the run's lock before
    Hydra creates anything; the run's record and snapshot. A completed run ends the process here (status 0)."""
    target = command.value("resume")
    if not target:
        return None
    run_dir = Path(target)
    if not run_dir.is_dir():
        raise UserError(f"resume={target}: no such folder", "give the folder of a run under outputs/runs/")
    refused = [a for a in command.overrides if override_key(a) not in RESUME_OVERRIDES]
    if refused:
        raise UserError(
            "resume= continues a run with its own config.yaml; refusing overrides that change it: " + " ".join(refused),
            "drop them (only progress_bar= and progress_every= may change, and total_timesteps= to a larger"
            " budget), or start a new run with them",
        )
    from rlrun.record import lock
    from rlrun.run import continuation, resume_order

    total = command.value("total_timesteps")  # a continuation to a larger budget, completed runs too
    if total is None:  # the read-only trust check, then the lock (held until this process ends), then the rest
        record, snapshot = resume_order.hold_for_resume(run_dir)
    else:
        resume_order.check_before_lock(run_dir)
        lock.hold(run_dir)
        record, snapshot = continuation.target(run_dir, continuation.budget(total, run_dir))
    if snapshot is None:
        final = record["final"]
        score = f" (mean return {final['mean_return']:.3f})" if final else ""
        print(f"{run_dir} is already completed{score}; nothing to do")
        sys.exit(0)
    return record, snapshot


def _refuse_multirun_with_a_view(argv: Sequence[str]) -> None:
    """``-m`` with ``--cfg`` or ``--info``: Hydra runs one or the other, and would say so with a traceback."""
    multirun = any(a in ("-m", "--multirun") for a in argv)
    view = next((a for a in argv if a in ("--cfg", "-c", "--info", "-i") or a.startswith(("--cfg=", "--info="))), None)
    if multirun and view is not None:
        raise UserError(
            f"-m with {view}: a sweep is run, or a config shown, not both",
            f"drop -m to show one job's config (rlrun ... {view} job), or {view} hydra for the sweep's own settings",
        )


def _refuse_a_sweep_without_multirun(command: CommandLine) -> None:
    """``seed=0,1`` without ``-m``: several values for one run (Hydra would list three readings of it)."""
    sweep = next((o for o in command.parsed if o.is_sweep_override()), None)
    if command.multirun or sweep is None:
        return
    line = sweep.input_line or sweep.key_or_group
    raise UserError(
        f"{line} gives several values, which only a sweep (-m) runs",
        f"rlrun -m {line} runs one job per value; {sweep.key_or_group}=[...] gives a list, '...' quoted a string",
    )
