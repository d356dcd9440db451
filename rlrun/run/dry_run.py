"""A run's builders and checks, in a run's order, without the training that follows them.

Where no training follows in the same process (a sweep's parent checking what all its jobs share, ``rlrun-tune``
before its first trial, ``rlrun-check``), :func:`preflight` calls the builders of :mod:`rlrun.make` as
:mod:`rlrun.run.training` does, once each, with the checks of :mod:`rlrun.checks.preflight` between them, on a
throwaway env and model. The checks themselves take values and build nothing.
"""

from __future__ import annotations

import warnings
from contextlib import closing

from omegaconf import DictConfig

from rlrun.checks import constructor
from rlrun.checks import preflight as checks
from rlrun.checks.rules import EnvFacts
from rlrun.config.errors import Problem, raise_if
from rlrun.make import models, vec_envs


def preflight(cfg: DictConfig) -> str:
    """Every check of a run, in a run's order, on a throwaway env and model; returns the policy."""
    checks.config_checks(cfg)
    model_cls = models.model_class(cfg)  # made as a run makes it: with jax, XLA's threads set as JAX starts
    algo_cls = checks.algorithm_checks(cfg, model_cls)
    with closing(vec_envs.make_env(cfg)) as probe:
        policy = checks.fit_checks(cfg, EnvFacts.of(probe), algo_cls, model_cls)
        checks.log_budget_warnings(cfg, EnvFacts.of(probe), algo_cls)
    checks.reward_checks(cfg, vec_envs.first_step(cfg))
    raise_if(model_problems(cfg))
    return policy


def model_problems(cfg: DictConfig) -> list[Problem]:
    """Whatever the algorithm raises while its model is built on throwaway env copies, as one problem.

    The copies are built as training builds them, but in-process (no worker processes start), and are closed
    again; only the first heavy step of a run costs this much (a few tens of ms).
    """
    venv = vec_envs.make_vec(cfg, cfg.env.n_envs, cfg.seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # budget_warnings says what SB3 would warn about here
            models.make_model(cfg, venv)
    except Exception as error:
        return [constructor.rejection(cfg, error)]
    finally:
        venv.close()
    return []
