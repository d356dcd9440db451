"""``python -m rlrun`` and the ``rlrun`` console script: Hydra composes the config, rlrun trains it.

The only module that touches Hydra's runtime: it reads the run folder, the group choices and the
overrides from ``HydraConfig`` and passes them to :func:`rlrun.train.train` as plain values.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from rlrun.errors import UserError, report_user_errors
from rlrun.train import train

log = logging.getLogger("rlrun")


def _command() -> str:
    """The command line as the user typed it (``python -m rlrun`` rather than a path to this file)."""
    prog = "python -m rlrun" if sys.argv[0].endswith("__main__.py") else Path(sys.argv[0]).name
    return " ".join([prog, *map(shlex.quote, sys.argv[1:])])


def _preset(choice: str | None) -> str | None:
    """The preset applied: the ``tuned`` choice if such a file exists (the entry is optional)."""
    if choice is None:
        return None
    return choice if choice in GlobalHydra.instance().config_loader().get_group_options("tuned") else None


def _meta() -> dict[str, Any]:
    hydra_cfg = HydraConfig.get()
    choices = hydra_cfg.runtime.choices
    return {
        "env": choices.get("env"),
        "algo": choices.get("algo"),
        "preset": _preset(choices.get("tuned")),
        "overrides": list(hydra_cfg.overrides.task),
        "command": _command(),
        "multirun": hydra_cfg.mode == RunMode.MULTIRUN,
    }


def _remove_if_unused(run_dir: Path) -> None:
    """Remove a run folder Hydra just made if the run never started (only Hydra's own files in it)."""
    if (run_dir / "run.json").exists() or not run_dir.is_dir():
        return
    if all(p.name == ".hydra" or p.suffix == ".log" for p in run_dir.iterdir()):
        shutil.rmtree(run_dir)


@hydra.main(config_path="pkg://rlrun.conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    """Train one run; return its final mean return, the value Hydra's sweepers optimise."""
    run_dir = Path(os.path.relpath(HydraConfig.get().runtime.output_dir))
    meta = _meta()
    with report_user_errors():
        try:
            final = train(cfg, run_dir, meta)
        except UserError:
            _remove_if_unused(run_dir)
            raise
    success = "" if final["success_rate"] is None else f", success rate {final['success_rate']:.2f}"
    log.info(
        "%s + %s, seed %d: mean return %.3f ± %.3f over %d episodes%s\nrun folder: %s",
        meta["env"], meta["algo"], cfg.seed, final["mean_return"], final["std_return"],
        final["episodes"], success, run_dir,
    )  # fmt: skip
    return final["mean_return"]


if __name__ == "__main__":
    main()
