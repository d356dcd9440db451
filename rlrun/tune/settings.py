"""``rlrun-tune``'s own keys (``tune.*``) and the overrides it refuses, checked before Hydra's entry runs and
before Optuna is imported."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from omegaconf import DictConfig

from rlrun.config.errors import UserError, raise_if
from rlrun.config.keys import override_key
from rlrun.config.resolvers import folder_name

SAMPLERS = ("tpe", "random", "cmaes")
PRUNERS = ("median", "hyperband", "none")
OBJECTIVES = ("iqm", "auc", "success")
REFUSED = {
    "seed": "rlrun-tune sets the seeds: 0 .. tune.seeds-1 for trials, 1000 on for validation",
    "resume": "a study continues when its command is run again; resume= is for single runs",
    "sweep": "a study's folder is outputs/tune/<tune.study>",
}


def check_tune_keys(tune: DictConfig, overrides: Sequence[str] = ()) -> None:
    """The tune.* values (counts in range, known objective, pruner and sampler, a usable study name) and the
    overrides rlrun-tune sets itself; raise :class:`UserError`."""
    for override in overrides:
        if (key := override_key(override)) in REFUSED:
            raise UserError(f"{override}: {REFUSED[key]}", f"drop {override}")
    problems = [
        (f"tune.{key}={tune[key]} must be {least} or more", f"set tune.{key} to {least} or more")
        for key, least in (("trials", 1), ("seeds", 1), ("validate_seeds", 0), ("n_jobs", 1))
        if tune[key] < least
    ]
    for key, allowed in (("objective", OBJECTIVES), ("pruner", PRUNERS), ("sampler", SAMPLERS)):
        if tune[key] not in allowed:
            problems.append(
                (f"tune.{key}={tune[key]} is not one of {', '.join(allowed)}", f"use tune.{key}={allowed[0]}")
            )
    if tune.sampler == "cmaes" and importlib.util.find_spec("cmaes") is None:
        problems.append(("tune.sampler=cmaes needs the cmaes package", "pip install cmaes, or use tune.sampler=tpe"))
    if tune.study is not None:  # a folder name as given, or refused (DESIGN.md, "Folders")
        try:
            folder_name("tune.study", tune.study)
        except UserError as error:
            problems.append((error.problem, error.fix or ""))
    raise_if(problems)
