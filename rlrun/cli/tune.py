"""``rlrun-tune`` (``python -m rlrun.cli.tune``): hyperparameter tuning with Optuna, several seeds per trial.

``rlrun-tune env=pointenv algo=sac tune.trials=40 tune.seeds=3`` composes what ``rlrun`` would train, plus
the search space of the config group ``search_space`` (``conf/search_space/<algo>.yaml``; DESIGN.md,
"Search spaces"), checks all of it, then runs the study in ``outputs/tune/<study>/``: each trial trains
seeds ``0 .. tune.seeds-1`` as ordinary runs (:mod:`rlrun.tune.trial`), the pruner stops hopeless trials,
and the best values are written as a preset and re-validated on fresh seeds (:mod:`rlrun.tune.report`).
The same command continues the study; several processes may work on it at once (:mod:`rlrun.tune.study`).

Exit status: 0 done; 1 every trial failed (the first error is shown); 2 a mistake found before anything
is written (bad search-space entry, bad tune.* value); 130/143 stopped by SIGINT/SIGTERM.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

from omegaconf import DictConfig

from rlrun.cli import entry
from rlrun.cli.command_line import CommandLine, text
from rlrun.config.errors import report_user_errors
from rlrun.tune.settings import check_tune_keys


def _stop(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through optimize(), which stops the runs and gives trials back


def tune(cfg: DictConfig) -> None:
    """Hydra's task: check the command, then run the study and report on it; exit with its status."""
    import optuna

    from rlrun.tune import command

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with report_user_errors("rlrun-tune"):
        setup = command.make_setup(cfg)
    signal.signal(signal.SIGTERM, _stop)
    try:
        status = command.run(setup)
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


def _check(command: CommandLine, cfg: DictConfig) -> None:
    """The tune.* keys and the overrides rlrun-tune sets itself, before Hydra's entry and Optuna."""
    check_tune_keys(cfg.tune, [text(o) for o in command.parsed])


def main() -> None:
    """Console-script entry point."""
    entry.enter("rlrun-tune", "tune", tune, _check)


if __name__ == "__main__":
    main()
