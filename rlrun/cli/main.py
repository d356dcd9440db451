"""``python -m rlrun`` and the ``rlrun`` console script: rlrun checks the command line, Hydra composes the config,
rlrun trains it.

The command line is read once (:class:`rlrun.cli.command_line.CommandLine`) and checked before Hydra runs
(:class:`rlrun.cli.invocation.Invocation`: mistakes, output folders, ``resume=``'s target), so a mistake creates
nothing on disk. Hydra then calls :class:`Task` with the config: a single run (:mod:`rlrun.cli.single_run`), or,
under ``-m``, each job of the sweep, which rlrun's sweeper wraps around this task (:mod:`rlrun.sweep.job`).
Nothing happens at import: the schema, the start-up measures and the plugins are set up by :func:`main`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import hydra
from omegaconf import DictConfig

from rlrun.cli.command_line import CommandLine
from rlrun.cli.invocation import Invocation
from rlrun.config.errors import report_user_errors
from rlrun.startup import bootstrap


@dataclass(frozen=True)
class Task:
    """Hydra's task function for this invocation: a module-level class, so that a sweep's launcher can pickle
    it (by reference) into its workers."""

    invocation: Invocation

    def __call__(self, cfg: DictConfig) -> float | None:
        """Train (or resume) one run; its final mean return, the value Hydra's sweepers optimise."""
        from rlrun.cli import single_run

        return single_run.run(cfg, self.invocation)

    def meta(self, cfg: DictConfig) -> dict[str, Any]:
        """What a run records of its job (env and algo names, preset, overrides): for the sweep's jobs too."""
        from rlrun.cli import single_run

        return single_run.meta(cfg)


def _register_plugins() -> None:
    """Hydra finds plugins by listing the ``hydra_plugins`` folders on ``sys.path``, which setuptools'
    editable installs do not show; register rlrun's own plugins through Hydra's public call instead."""
    from hydra.core.plugins import Plugins

    plugins = Plugins.instance()  # scan first, then add rlrun's

    from hydra_plugins.rlrun_ray_launcher.ray_launcher import RayLauncher
    from hydra_plugins.rlrun_sweeper.rlrun_sweeper import RlrunSweeper

    for plugin in (RayLauncher, RlrunSweeper):
        plugins.register(plugin)


def _run_hydra(task: Task) -> None:
    """Hand the checked command line to Hydra, which reads it from ``sys.argv`` (it takes it from nowhere else)."""
    sys.argv = [sys.argv[0], *task.invocation.hydra_argv()]
    hydra.main(config_path="pkg://rlrun.conf", config_name="config", version_base="1.3")(task)()


def main() -> None:
    """Console-script entry point; it starts with the garbage collector paused until training or the sweep
    starts (:mod:`rlrun.startup.bootstrap`)."""
    from rlrun.config import store

    bootstrap.pause_collector()
    store.register()  # the schema, the resolvers and hydra/sweeper=rlrun, before anything reads a config
    _register_plugins()
    with report_user_errors():
        invocation = Invocation.read(CommandLine.parse(sys.argv[1:]))  # the one place the command line is read
    _run_hydra(Task(invocation))


if __name__ == "__main__":  # python -m rlrun.cli.main: under the module's own name, so that Task pickles by it
    from rlrun.cli import main as entry

    entry.main()
