"""``python -m rlrun`` and the ``rlrun`` console script: Hydra composes the config, rlrun trains it.

The only module that touches Hydra's runtime: it reads the run folder, the group choices and the
overrides from ``HydraConfig`` and passes them to :mod:`rlrun.run.training` as plain values. ``resume=``
is checked here before Hydra runs, so a bad target creates nothing on disk. Under ``-m`` the sweep is
planned and recorded by rlrun's sweeper (``hydra_plugins/rlrun_sweeper``, :mod:`rlrun.sweep.runner`) and each
job goes through :func:`rlrun.sweep.job.run_job`, which never raises.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import hydra
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from rlrun.cli.command_line import (
    CommandLine,
    check_benchmark_part,
    check_launcher_extras,
    check_output_folders,
    check_wrapper_names,
)

# Only modules that do not import torch: a sweep's own process starts its launcher's workers before it
# imports torch (hydra_plugins/rlrun_sweeper/warm_up.py); training imports it where it starts.
from rlrun.config import store
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.keys import RESUME_OVERRIDES, override_key
from rlrun.config.resolvers import env_name
from rlrun.record.formats import WriteFailed
from rlrun.record.leftovers import remove_leftovers
from rlrun.record.provenance import command_line, prog
from rlrun.startup import bootstrap
from rlrun.sweep.job import run_job

# Hydra reads rlrun's configs here, and a sweep's workers import this module to run its jobs
store.register()

log = logging.getLogger("rlrun")

# At import: this module is also what a sweep's worker processes import to run a job.
bootstrap.install()


def _preset(choice: str | None) -> str | None:
    """The preset applied: the ``tuned`` choice if such a file exists (the entry is optional)."""
    if choice is None:
        return None
    return choice if choice in GlobalHydra.instance().config_loader().get_group_options("tuned") else None


def _meta(cfg: DictConfig) -> dict[str, Any]:
    hydra_cfg = HydraConfig.get()
    choices = hydra_cfg.runtime.choices
    return {
        "env": env_name(choices.get("env"), *(OmegaConf.select(cfg, f"env.{k}", default=None) for k in ("id", "name"))),
        "algo": choices.get("algo"),
        "preset": _preset(choices.get("tuned")),
        "overrides": list(hydra_cfg.overrides.task),
        "command": command_line(),
        "multirun": hydra_cfg.mode == RunMode.MULTIRUN,
    }


@dataclass
class _Invocation:
    """What this process learned from its command line before Hydra ran, for the task function Hydra calls."""

    command: CommandLine
    existing: set[str] | None = None  # what hydra.run.dir held before Hydra wrote there: the user's, kept
    existing_parents: set[Path] = field(default_factory=set)  # outputs/runs/<env>-<algo> folders already there
    resumed: dict[str, Any] | None = None  # the run.json of the run resume= continues

    @classmethod
    def read(cls, command: CommandLine) -> _Invocation:
        """Note what ``hydra.run.dir`` holds before Hydra writes there (the default folder is always new), and
        which folders of the default layout exist."""
        invocation = cls(command)
        target = command.value("hydra.run.dir")
        if target and Path(target).is_dir():
            invocation.existing = {p.name for p in Path(target).iterdir()}
        runs = Path("outputs", "runs").resolve()
        invocation.existing_parents.update(p for p in (runs.parent, runs) if p.is_dir())
        if runs.is_dir():
            invocation.existing_parents.update(p for p in runs.iterdir() if p.is_dir())
        return invocation


_invocation = _Invocation(CommandLine.parse([]))  # set by main(); Hydra's task function takes no arguments


def _remove_if_unused(run_dir: Path) -> None:
    """Remove what Hydra just made for a run that never started: its ``.hydra/`` and log, and the folder
    itself if Hydra created it. Nothing that existed before this process started is touched."""
    before = _invocation.existing if _invocation.command.value("hydra.run.dir") else None
    if remove_leftovers(run_dir, before):
        outputs = Path("outputs").resolve()
        for parent in run_dir.resolve().parents:  # outputs/runs/<env>-<algo> if Hydra made it just now
            if parent in _invocation.existing_parents or not parent.is_relative_to(outputs) or any(parent.iterdir()):
                break
            parent.rmdir()


def _report(run_dir: Path, final: dict[str, Any], env: str, algo: str, seed: int) -> None:
    """The final line of a run, from what the run returned."""
    success = "" if final["success_rate"] is None else f", success rate {final['success_rate']:.2f}"
    log.info(
        "%s + %s, seed %d: mean return %.3f ± %.3f over %d episodes%s\nrun folder: %s",
        env,
        algo,
        seed,
        final["mean_return"],
        final["std_return"],
        final["episodes"],
        success,
        run_dir,
    )


@hydra.main(config_path="pkg://rlrun.conf", config_name="config", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> float | None:
    """Train (or resume) one run; return its final mean return, the value Hydra's sweepers optimise."""
    meta = _meta(cfg)
    if meta["multirun"]:  # a sweep's job: records whatever happens and returns (rlrun/sweep/job.py)
        hydra_cfg = HydraConfig.get()
        return run_job(cfg, Path(hydra_cfg.runtime.output_dir), Path(hydra_cfg.sweep.dir), meta)
    return _single_run(cfg, meta)


def _after_write_failure(run_dir: Path) -> str:
    """What to do after a run stopped by a write that failed (a full disk): where it can continue from."""
    if (run_dir / "run.json").is_file() and any((run_dir / "snapshots").glob("step-*")):
        return f"free space, then continue from its newest complete snapshot with: {prog()} resume={run_dir}"
    return "free space, then start it again"


def _single_run(cfg: DictConfig, meta: dict[str, Any]) -> float:
    """``python -m rlrun ...`` without ``-m``: train or resume, report, exit with DESIGN.md's statuses."""
    from rlrun.make.nan import NonFiniteValue
    from rlrun.run import training
    from rlrun.run.interrupts import RunInterrupted

    with report_user_errors():
        try:
            if cfg.resume is not None:
                run_dir = Path(cfg.resume)
                final = training.resume(run_dir, cfg.progress_bar, meta)
                resumed = _invocation.resumed or {}  # a resumed run reports its own env, algo and seed
                about = str(resumed.get("env")), str(resumed.get("algo")), int(resumed.get("seed", cfg.seed))
            else:
                run_dir = Path(os.path.relpath(HydraConfig.get().runtime.output_dir))
                try:
                    final = training.train(cfg, run_dir, meta)
                    about = str(meta["env"]), str(meta["algo"]), int(cfg.seed)
                except BaseException:
                    _remove_if_unused(run_dir)  # only when the run never started (no run.json)
                    raise
        except NonFiniteValue as error:
            print(
                f"rlrun: run failed: {error}\nrun.json records it; snapshots so far are kept in {run_dir}",
                file=sys.stderr,
            )
            sys.exit(1)
        except WriteFailed as error:  # a full disk, a quota, a read-only filesystem: one line, no traceback
            print(f"rlrun: run failed: {error}; {_after_write_failure(run_dir)}", file=sys.stderr)
            sys.exit(1)
        except RunInterrupted as stop:
            print(
                f"rlrun: {stop}; snapshot written. Continue with:\n  {prog()} resume={stop.run_dir}",
                file=sys.stderr,
            )
            sys.exit(stop.exit_status)
        except KeyboardInterrupt:  # a third signal: no snapshot at this point, the newest one is kept
            print(
                "rlrun: stopped at once, without a snapshot of this step; run.json says interrupted. "
                f"Continue from its newest snapshot, if it has one, with:\n  {prog()} resume={run_dir}",
                file=sys.stderr,
            )
            sys.exit(130)
        except UserError:
            raise
        except Exception as error:  # the env or the algorithm failed while training: where, and a fix
            if os.environ.get("HYDRA_FULL_ERROR") == "1":
                raise
            _report_failure(error, str(cfg.env.id), run_dir)
    _report(run_dir, final, *about)
    return float(final["mean_return"])


def _report_failure(error: Exception, env_id: str, run_dir: Path) -> NoReturn:
    """A run that failed inside the env or the algorithm: the exception, the line it was raised at (the innermost
    outside rlrun) and a fix (:func:`rlrun.make.gym_make.failure_fix`); exit status 1."""
    from rlrun.make.gym_make import failure_fix

    at, fix = failure_fix(error, env_id)
    recorded = f"\nrun.json in {run_dir} records it" if (run_dir / "run.json").is_file() else ""
    print(f"rlrun: run failed: {type(error).__name__}: {error}{at}\n  fix: {fix}{recorded}", file=sys.stderr)
    sys.exit(1)


def _resume_overrides(command: CommandLine) -> list[str]:
    """For ``resume=<run_dir>``: check the target and the other overrides and take the run's lock before
    Hydra creates anything, and point Hydra at the run's own folder without letting it write a new ``.hydra``
    record there."""
    target = command.value("resume")
    if not target:
        return []
    run_dir = Path(target)
    if not run_dir.is_dir():
        raise UserError(f"resume={target}: no such folder", "give the folder of a run under outputs/runs/")
    from rlrun.run.resume_state import load_target

    refused = [a for a in command.overrides if override_key(a) not in RESUME_OVERRIDES]
    if refused:
        raise UserError(
            "resume= continues a run with its own config.yaml; refusing overrides that change it: " + " ".join(refused),
            "drop them (only progress_bar= may change), or start a new run with them",
        )
    from rlrun.record.lock import hold

    hold(run_dir)  # until this process ends: a second resume of the run is refused here, exit 2
    record, snapshot = load_target(run_dir)
    _invocation.resumed = record
    if snapshot is None:
        final = record["final"]
        score = f" (mean return {final['mean_return']:.3f})" if final else ""
        print(f"{run_dir} is already completed{score}; nothing to do")
        sys.exit(0)
    return [f"hydra.run.dir={run_dir}", "hydra.output_subdir=null"]


def _refuse_existing_run_dir(command: CommandLine) -> None:
    """A new run pointed at an existing run's folder: refuse before Hydra writes its record there."""
    target = command.value("hydra.run.dir")
    if target and command.value("resume") is None:
        from rlrun.record.run_record import refuse_existing_run

        refuse_existing_run(Path(target))


def _register_plugins() -> None:
    """Hydra finds plugins by listing the ``hydra_plugins`` folders on ``sys.path``, which setuptools'
    editable installs do not show; register rlrun's own plugins through Hydra's public call instead."""
    from hydra.core.plugins import Plugins

    plugins = Plugins.instance()  # scan first: the scan re-executes Hydra's basic sweeper, RlrunSweeper's base

    from hydra_plugins.rlrun_ray_launcher.ray_launcher import RayLauncher
    from hydra_plugins.rlrun_sweeper.rlrun_sweeper import RlrunSweeper

    for plugin in (RayLauncher, RlrunSweeper):
        plugins.register(plugin)


@bootstrap.entry
def main() -> None:
    """Console-script entry point; it starts with the garbage collector paused until training or the sweep
    starts, and ends without Python's slow module teardown (:mod:`rlrun.startup.bootstrap`)."""
    bootstrap.pause_collector()
    _main()


def _main() -> None:
    _register_plugins()
    global _invocation
    command = CommandLine.parse(sys.argv[1:])  # the one place the command line is read
    with report_user_errors():
        check_wrapper_names(command)
        check_launcher_extras(command)
        check_benchmark_part(command)
        check_output_folders(command)
        _refuse_existing_run_dir(command)
        _invocation = _Invocation.read(command)
        resume = _resume_overrides(command)
    sys.argv = [sys.argv[0], *command.argv, *resume]  # what Hydra reads: the command line and resume's folder
    _hydra_main()


if __name__ == "__main__":
    main()
