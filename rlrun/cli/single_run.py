"""One run of ``rlrun`` without ``-m``: Hydra's task function trains (or resumes) it, reports it, and turns a run
that failed into one message and DESIGN.md's exit status (:mod:`rlrun.run.stopped`)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from rlrun.cli.invocation import Invocation
from rlrun.config import user_configs
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.resolvers import env_name
from rlrun.record.provenance import command_line

log = logging.getLogger("rlrun")


def meta(cfg: DictConfig) -> dict[str, Any]:
    """What Hydra knows of this job that the run records: env and algo names, the preset, the overrides."""
    hydra_cfg = HydraConfig.get()
    choices = hydra_cfg.runtime.choices
    tuned = choices.get("tuned")
    presets = GlobalHydra.instance().config_loader().get_group_options("tuned") if tuned else []
    return {
        "env": env_name(choices.get("env"), *(OmegaConf.select(cfg, f"env.{k}", default=None) for k in ("id", "name"))),
        "algo": choices.get("algo"),
        "preset": tuned if tuned in presets else None,  # the optional entry: only if such a file exists
        "overrides": list(hydra_cfg.overrides.task),
        "command": command_line(),
        # the file Hydra read the preset from when it is the user's (--config-dir): the start banner names it
        "preset_file": user_configs.preset_source(
            GlobalHydra.instance().config_loader().get_sources(), tuned if tuned in presets else None
        ),
    }


def run(cfg: DictConfig, invocation: Invocation) -> float:
    """Train or resume, report, and exit with DESIGN.md's statuses; the final mean return."""
    from rlrun.run import evaluation, stopped, training

    about = meta(cfg)
    if invocation.resumed is not None:
        run_dir = Path(cfg.resume)
        record = invocation.resumed[0]  # a resumed run reports its own env, algo and seed
        env, algo, seed = str(record.get("env")), str(record.get("algo")), int(record.get("seed", cfg.seed))
    else:
        run_dir = Path(os.path.relpath(HydraConfig.get().runtime.output_dir))
        env, algo, seed = str(about["env"]), str(about["algo"]), int(cfg.seed)
    with report_user_errors():
        try:
            if invocation.resumed is not None:
                continued = invocation.command.value("total_timesteps") is not None  # to a larger budget
                total = cfg.total_timesteps if continued else None
                every = cfg.progress_every if invocation.command.value("progress_every") is not None else None
                final = training.resume(run_dir, cfg.progress_bar, about, total, invocation.resumed, every)
            else:
                try:
                    final = training.train(cfg, run_dir, about)
                except BaseException:
                    _remove_if_unused(run_dir, invocation)  # only when the run never started (no run.json)
                    raise
        except UserError:
            raise
        except BaseException as error:
            message, status = stopped.explained(error, run_dir, str(cfg.env.id))
            print(message, file=sys.stderr)
            sys.exit(status)
    log.info("%s + %s, seed %d: %s\nrun folder: %s", env, algo, seed, evaluation.summary_text(final), run_dir)
    return float(final["mean_return"])


def _remove_if_unused(run_dir: Path, invocation: Invocation) -> None:
    """Remove what Hydra just made for a run that never started: its ``.hydra/`` and log, and the folder
    itself if Hydra created it. Nothing that existed before this process started is touched."""
    from rlrun.record.leftovers import remove_leftovers

    before = invocation.existing if invocation.command.value("hydra.run.dir") else None
    if remove_leftovers(run_dir, before):
        outputs = Path("outputs").resolve()
        for parent in run_dir.resolve().parents:  # outputs/runs/<env>-<algo> if Hydra made it just now
            if parent in invocation.existing_parents or not parent.is_relative_to(outputs) or any(parent.iterdir()):
                break
            parent.rmdir()
