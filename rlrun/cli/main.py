"""``python -m rlrun`` and the ``rlrun`` console script: Hydra composes the config, rlrun trains it.

The command line is read, composed and checked once, before Hydra's entry runs (:func:`rlrun.cli.entry.read`),
and ``resume=``'s target is checked and locked (:class:`rlrun.cli.invocation.Invocation`), so a mistake creates
nothing on disk. Hydra then calls :class:`Task` with the config: a single run (:mod:`rlrun.cli.single_run`), or,
under ``-m``, each job of the sweep, which rlrun's sweeper wraps around this task (:mod:`rlrun.sweep.job`).
Nothing happens at import: the schema, the start-up measures and the plugins are set up by :func:`main`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig

from rlrun.cli import entry, single_run
from rlrun.cli.invocation import Invocation
from rlrun.config.errors import report_user_errors
from rlrun.run import signals
from rlrun.startup import bootstrap


@dataclass(frozen=True)
class Task:
    """Hydra's task function for this invocation: a module-level class, so that a sweep's launcher can pickle
    it (by reference) into its workers."""

    invocation: Invocation

    def __call__(self, cfg: DictConfig) -> float | None:
        """Train (or resume) one run; its final mean return, the value Hydra's sweepers optimise."""
        return single_run.run(cfg, self.invocation)

    def meta(self, cfg: DictConfig) -> dict[str, Any]:
        """What a run records of its job (env and algo names, preset, overrides): for the sweep's jobs too."""
        return single_run.meta(cfg)


def main() -> None:
    """Console-script entry point; it starts with the garbage collector paused until training or the sweep
    starts (:mod:`rlrun.startup.bootstrap`)."""
    bootstrap.pause_collector()
    command, _ = entry.read("rlrun", "config")
    with report_user_errors():
        invocation = Invocation.read(command)
    with contextlib.nullcontext() if command.multirun else signals.deferring():  # a stop as Hydra makes the folder
        entry.run_hydra("config", Task(invocation), tuple(invocation.hydra_argv()))


if __name__ == "__main__":  # python -m rlrun.cli.main: under the module's own name, so that Task pickles by it
    from rlrun.cli import main as rlrun_main

    rlrun_main.main()
