"""The one way into Hydra of ``rlrun``, ``rlrun-check`` and ``rlrun-tune`` (:func:`enter`).

The command line is read once (:class:`rlrun.cli.command_line.CommandLine`); Hydra composes its config with the
compose API and rlrun translates what Hydra refuses (:mod:`rlrun.cli.composition`); the few mistakes Hydra would
only meet later (a launcher whose extra is missing, an output folder that cannot be written, a benchmark part that
is not there) are refused here too. All of it happens before Hydra's own entry creates anything, and before torch,
SB3, JAX or Optuna are imported. Then Hydra's entry (``hydra.main``) runs the command's task with the same argv.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from rlrun.cli.command_line import CommandLine, text, values
from rlrun.cli.composition import compose_checked
from rlrun.config import store, user_configs
from rlrun.config.errors import UserError, report_user_errors
from rlrun.make import families

OUTPUT_KEYS = ("hydra.run.dir", "hydra.sweep.dir")
# hydra/launcher options -> the extra of rlrun that installs what they need
LAUNCHER_EXTRAS = {"ray": "ray", "slurm": "slurm", "submitit_slurm": "slurm", "submitit_local": "slurm"}

Check = Callable[[CommandLine, DictConfig], None]  # a command's own checks of its command line and config


def enter(
    prog: str, config_name: str, task: Callable[[DictConfig], Any], checks: Check | None = None
) -> tuple[CommandLine, DictConfig]:
    """Read, compose and check ``sys.argv``, then run ``task`` under Hydra's entry; a mistake ends the process
    with exit status 2 before anything is created."""
    command, cfg = read(prog, config_name, checks)
    run_hydra(config_name, task, command.argv)
    return command, cfg


def read(prog: str, config_name: str, checks: Check | None = None) -> tuple[CommandLine, DictConfig]:
    """The command line as Hydra is to read it and its first job's config; exit 2 for a mistake."""
    store.register()  # the schema, the resolvers and hydra/sweeper=rlrun, before anything reads a config
    _register_plugins()
    with report_user_errors(prog):
        command, cfg = checked(sys.argv[1:], config_name, checks)
        user_configs.put_first(command.config_dir)  # for Hydra's entry, next in this process
    return command, cfg


def checked(argv: list[str], config_name: str, checks: Check | None = None) -> tuple[CommandLine, DictConfig]:
    """:func:`read` for ``argv``; raise :class:`UserError` for a mistake."""
    command = CommandLine.parse(argv)
    refuse_before_composing(command)
    with user_configs.searched_first(command.config_dir):
        refuse_unknown_benchmark_part(command, command.config_name or config_name)
        command, cfg = compose_checked(command, command.config_name or config_name)
    refuse_output_folders(command)
    if checks is not None:
        checks(command, cfg)
    return command, cfg


def run_hydra(config_name: str, task: Callable[[DictConfig], Any], argv: tuple[str, ...]) -> None:
    """Hand ``argv`` to Hydra's entry, which reads it from ``sys.argv`` (it takes it from nowhere else)."""
    sys.argv = [sys.argv[0], *argv]
    hydra.main(config_path="pkg://rlrun.conf", config_name=config_name, version_base="1.3")(task)()


def _register_plugins() -> None:
    """Hydra finds plugins by listing the ``hydra_plugins`` folders on ``sys.path``, which setuptools'
    editable installs do not show; register rlrun's own plugins through Hydra's public call instead."""
    from hydra.core.plugins import Plugins

    plugins = Plugins.instance()  # scan first, then add rlrun's

    from hydra_plugins.rlrun_ray_launcher.ray_launcher import RayLauncher
    from hydra_plugins.rlrun_sweeper.rlrun_sweeper import RlrunSweeper

    for plugin in (RayLauncher, RlrunSweeper):
        plugins.register(plugin)


def refuse_before_composing(command: CommandLine) -> None:
    """What Hydra would answer with a traceback, or with a misleading word, before it composes anything."""
    if command.multirun and command.view is not None:  # Hydra runs one or the other
        raise UserError(
            f"-m with {command.view}: a sweep is run, or a config shown, not both",
            f"drop -m to show one job's config (rlrun ... {command.view} job), or {command.view} hydra for the "
            "sweep's own settings",
        )
    sweep = next((o for o in command.parsed if o.is_sweep_override()), None)
    if sweep is not None and not command.multirun:  # several values for one run
        raise UserError(
            f"{text(sweep)} gives several values, which only a sweep (-m) runs",
            f"rlrun -m {text(sweep)} runs one job per value; {sweep.key_or_group}=[...] gives a list, '...' quoted "
            "a string",
        )
    launcher = command.value("hydra/launcher")  # a launcher whose extra is missing is no unknown option
    if isinstance(launcher, str) and launcher in LAUNCHER_EXTRAS:
        families.require(LAUNCHER_EXTRAS[launcher], f"hydra/launcher={launcher}")


def refuse_output_folders(command: CommandLine) -> None:
    """``hydra.run.dir``/``hydra.sweep.dir`` that is empty (an unset shell variable: the current folder) or
    cannot be created or written."""
    for key in OUTPUT_KEYS:
        value = command.value(key)
        if value is None or "${" in str(value):
            continue
        if str(value).strip() == "":
            raise UserError(
                f"{key} is empty (an unset shell variable?): the run would write into the current folder",
                f"give {key} a folder, or leave it out for the default under outputs/",
            )
        problem = _unwritable(Path(str(value)))
        if problem:
            raise UserError(
                f"{key}={value} cannot be written: {problem}",
                f"choose a folder you can write to, or leave {key} at its default (under outputs/)",
            )


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot be created and written to, or None if it can."""
    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:  # a real try, removed at once: permissions alone do not tell (root, read-only mounts, /proc)
        os.rmdir(tempfile.mkdtemp(prefix=".rlrun-write-test-", dir=existing))
    except OSError as error:
        return f"a folder cannot be created in {existing} ({error.strerror or error})"
    return None


def refuse_unknown_benchmark_part(command: CommandLine, config_name: str) -> None:
    """``benchmark.part=`` picks the sweep's jobs (``conf/benchmark/zoo.yaml``): a part the chosen benchmark does
    not have would end in a traceback in the sweeper. The parts are read from the config composed without it."""
    given = command.given("benchmark.part")
    if given is None:
        return
    cfg = compose_checked(command.without(given), config_name)[1]
    chosen = cfg.hydra.runtime.choices.get("benchmark")
    parts = OmegaConf.select(cfg, "benchmark.parts", default=None)
    if not parts:
        raise UserError(f"benchmark={chosen} has no parts", "leave out benchmark.part")
    for part in values(given):  # each of a sweep's
        if part not in {str(key) for key in parts}:
            raise UserError(
                f"benchmark.part={part} is not a part of benchmark={chosen}",
                f"use one of: {', '.join(map(str, parts))} (conf/benchmark/{chosen}.yaml)",
            )
