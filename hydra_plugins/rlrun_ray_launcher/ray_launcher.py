"""The Launcher plugin: submit each job of a sweep as a ``ray.remote`` task running Hydra's ``run_job``.

Ray is imported only when a sweep is launched, since Hydra imports every plugin at start-up.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, run_job, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

log = logging.getLogger(__name__)


def execute_job(
    idx: int,
    overrides: list[str],
    hydra_context: HydraContext,
    config: DictConfig,
    task_function: TaskFunction,
    singleton_state: dict[Any, Any],
) -> JobReturn:
    """Run one job inside a Ray worker, as Hydra's joblib launcher does inside a joblib worker."""
    setup_globals()
    Singleton.set_state(singleton_state)
    sweep_config = hydra_context.config_loader.load_sweep_config(config, overrides)
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
        sweep_config.hydra.job.num = idx
    HydraConfig.instance().set_config(sweep_config)
    return run_job(
        hydra_context=hydra_context,
        task_function=task_function,
        config=sweep_config,
        job_dir_key="hydra.sweep.dir",
        job_subdir_key="hydra.sweep.subdir",
    )


def _settings(node: DictConfig) -> dict[str, Any]:
    """A config node as keyword arguments, leaving out the unset (null) ones, so Ray's defaults apply."""
    container = OmegaConf.to_container(node, resolve=True)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items() if value is not None}


class RayLauncher(Launcher):
    """Runs the jobs of a sweep as Ray tasks on a local Ray or on the cluster at ``ray.init.address``."""

    def __init__(self, ray: DictConfig) -> None:
        self.ray = ray
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None
        self.task_function: TaskFunction | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        """Keep what every job needs (Hydra calls this once, before ``launch``)."""
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Any, initial_job_idx: int) -> list[JobReturn]:
        """Submit every job, then wait for all of them; a job whose task failed comes back as a failed
        ``JobReturn`` (the sweeper decides what that means), so one lost worker never hides the others."""
        import ray

        assert self.config is not None and self.hydra_context is not None and self.task_function is not None
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        if not ray.is_initialized():
            # address null: a Ray of this sweep's own ("local"), never one that ray.init would find on its
            # own (a cluster left running on this machine, or the stale address of one that was stopped)
            ray.init(**{"address": "local", **_settings(self.ray.init)})
        remote_job = ray.remote(**_settings(self.ray.remote))(execute_job)
        log.info(f"Ray is launching {len(job_overrides)} jobs, sweep output dir: {sweep_dir}")
        singleton_state = Singleton.get_state()
        tasks = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
            tasks.append(
                remote_job.remote(
                    idx, list(overrides), self.hydra_context, self.config, self.task_function, singleton_state
                )
            )
        try:
            return [_result(task, overrides) for task, overrides in zip(tasks, job_overrides, strict=True)]
        except KeyboardInterrupt:
            for task in tasks:
                ray.cancel(task)
            raise


def _result(task: Any, overrides: list[str]) -> JobReturn:
    """The job's ``JobReturn``, or a failed one carrying Ray's error when its task did not finish."""
    import ray

    try:
        result = ray.get(task)
    except ray.exceptions.RayError as error:
        log.error(f"Ray task for {' '.join(filter_overrides(overrides))} failed: {error}")
        return JobReturn(overrides=list(overrides), status=JobStatus.FAILED, _return_value=error)
    assert isinstance(result, JobReturn)
    return result
