"""The Launcher plugin: submit each job of a sweep as a ``ray.remote`` task running Hydra's ``run_job``.

Ray is imported only when a sweep is launched, since Hydra imports every plugin at start-up.

A Ray this launcher starts itself (no ``address``) is kept as private as Ray allows: no dashboard and so no job
server (``include_dashboard=True`` asks for one), its node address 127.0.0.1. Ray 2.60 still binds the GCS
server, the raylet and the workers to all network interfaces whatever address it is given: when a server of
it listens beyond the loopback interface, a warning says so and how to keep such a Ray private (a firewall, or
a cluster started on 127.0.0.1 and joined with ``address``).
Joining a running cluster passes the settings as they are.
"""

from __future__ import annotations

import contextlib
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

# ray.init's settings for a Ray of the sweep's own, unless the config sets them: nothing served beyond this machine
# that Ray lets us keep in (the dashboard and its job server listen wherever they are told; the rest, see LOCAL_WARNING)
LOCAL_SETTINGS: dict[str, Any] = {"include_dashboard": False, "_node_ip_address": "127.0.0.1"}
LOCAL_WARNING = (
    "hydra/launcher=ray without an address starts a Ray of this sweep's own, and Ray binds its servers (GCS, "
    "raylet, workers) to all network interfaces whatever address it is given: other machines can reach them while "
    "the sweep runs (Ray's token authentication, on unless RAY_AUTH_MODE=disabled, refuses their work). To keep "
    "them private, block Ray's ports to other machines in a firewall, or join a Ray that others cannot reach with "
    "hydra.launcher.ray.init.address=HOST:PORT (docs/sweeps.md, On a cluster: Ray)"
)


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
            settings = _init_settings(_settings(self.ray.init))
            ray.init(**settings)
            if settings["address"] == "local" and _served_beyond_loopback():
                log.warning(LOCAL_WARNING)
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


def _init_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """``ray.init``'s arguments. Address null: a Ray of this sweep's own ("local"), never one that ray.init would
    find on its own (a cluster left running on this machine, or the stale address of one that was stopped),
    with :data:`LOCAL_SETTINGS` where the config does not set them."""
    settings = {"address": "local", **settings}
    if settings["address"] != "local":
        return settings  # joining a running cluster: its own settings decide what it serves
    return {**LOCAL_SETTINGS, **settings}


def _served_beyond_loopback() -> bool:
    """Whether this process or one it started (the Ray just started here) listens beyond the loopback interface;
    True where that cannot be found out."""
    try:
        import psutil  # Ray's own copy (ray/thirdparty_files, on sys.path once ray is imported) if none is installed

        here = psutil.Process()
        addresses: set[str] = set()
        for process in [here, *here.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                sockets = process.net_connections(kind="inet")
                addresses |= {s.laddr.ip for s in sockets if s.status == psutil.CONN_LISTEN}
    except Exception:  # no psutil, or no right to look
        return True
    return bool(addresses - {"127.0.0.1", "::1"})


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
