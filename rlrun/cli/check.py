"""``rlrun-check`` (``python -m rlrun.cli.check env=X [algo=Y] [wrappers=...]``): find problems before training.

Builds exactly what ``rlrun`` would train (through :mod:`rlrun.make.vec_envs`) and reports each check as PASS, FAIL
or SKIP: the env checks of :mod:`rlrun.checks.env_checks`, and with ``algo`` on the command line (``algo=...``
or any ``algo.<key>=...``) the rules training applies before it starts (:mod:`rlrun.checks.rules`): the
algorithm's arguments, its fit to the spaces after the wrappers, and the budgets. ``sim=N`` prints a random-action
episode step by step instead (``render=ansi`` prints the frames). Exit status: 0 all passed, 1 a check failed,
2 a user mistake that stops the checks from running (bad id, bad value). Writes no files.
"""

from __future__ import annotations

import sys

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from rlrun.cli import entry
from rlrun.config.budget import fit_to_budget
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.keys import override_key


def algo_given(overrides: list[str]) -> bool:
    """Whether the command line chose or changed the algorithm (``algo=...``, ``algo.<key>=...``)."""
    keys = [override_key(override) for override in overrides]
    return any(key == "algo" or key.startswith("algo.") for key in keys)


def check(cfg: DictConfig) -> None:
    """Hydra's task: check the env (and algorithm) ``rlrun`` would build for these overrides; exit 1 if a check
    fails."""
    from rlrun.checks.env_checks import FAIL
    from rlrun.checks.printing import report, simulate
    from rlrun.run.check_suite import run_checks

    hydra_cfg = HydraConfig.get()
    choices, with_algo = hydra_cfg.runtime.choices, algo_given(list(hydra_cfg.overrides.task))
    with report_user_errors("rlrun-check"):
        if cfg.render is not None and not cfg.sim:
            raise UserError(f"render={cfg.render} shows a simulated episode", "add sim=N, e.g. sim=20")
        if cfg.sim:
            simulate(cfg)
            return
        cfg, scaled = fit_to_budget(cfg, hydra_cfg.overrides.task)  # the config the run would train
        for line in scaled:
            print(line)
        results = run_checks(cfg, with_algo)
    algo = f", algo={choices.get('algo')}" if with_algo else ""
    wrappers = f", wrappers=[{','.join(cfg.wrappers)}]" if cfg.wrappers else ""
    print(f"rlrun-check: env={choices.get('env')} ({cfg.env.id}){algo}{wrappers}, seed={cfg.seed}")
    print(report(results))
    if any(r.status == FAIL for r in results):
        sys.exit(1)


def main() -> None:
    """Console-script entry point."""
    entry.enter("rlrun-check", "check", check)


if __name__ == "__main__":
    main()
