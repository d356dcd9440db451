"""``hydra/sweeper=rlrun``: Hydra's basic sweeper with rlrun's decisions taken before any job is launched.

Hydra writes a job's ``.hydra/`` and opens its log inside the job, before rlrun's code runs there, so
whether a job is skipped, resumed, run again or refused is decided here, in the sweep's own process
(:mod:`rlrun.sweep.runner`); the launcher (basic, joblib, submitit, Ray) only ever sees the jobs to run.

This module is rlrun's only seam with Hydra's internals (``tests/rlrun/sweep/test_sweeper.py`` checks each in the
installed Hydra). Hydra ships its cartesian-product sweeper (the command line's grammar of values, ``params``,
``max_batch_size``) only as ``hydra._internal.core_plugins.basic_sweeper.BasicSweeper``, with no public base
class; subclassing it keeps exactly its behaviour for the jobs. Relied on: its constructor's ``max_batch_size``
and ``params``, the attributes ``setup`` fills (``hydra_context``, ``config``, ``launcher``) and ``params``, and
the static ``split_arguments(overrides, max_batch_size)`` (the product itself). ``BasicLauncher``, from
``hydra._internal.core_plugins.basic_launcher``, is imported only to tell whether jobs run in this process.
"""

import copy
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# Hydra's internals: see the module's docstring
from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from hydra_plugins.rlrun_sweeper import config as _config  # noqa: F401  (stores hydra/sweeper=rlrun)
from rlrun.sweep import warm_up

if TYPE_CHECKING:
    from rlrun.sweep.plan import Job


def _claim(sweep_dir: Path) -> None:
    """Hold the sweep folder's lock until this process ends (:mod:`rlrun.record.lock`): a second sweep of the
    same folder is refused as a whole, before it launches anything (Hydra writes a job's folder before rlrun
    runs in it, so the jobs' own locks would come too late)."""
    from rlrun.record.lock import hold

    sweep_dir.mkdir(parents=True, exist_ok=True)
    hold(
        sweep_dir,
        "the sweep",
        "wait until that sweep ends (the same command then continues it), or name this one differently (sweep=NAME)",
    )


class RlrunSweeper(BasicSweeper):
    """Cartesian-product sweeps, as Hydra's basic sweeper, that skip, resume, re-run or refuse each job."""

    def __init__(
        self, max_batch_size: int | None = None, params: dict[str, str] | None = None, stale_after_s: float = 600.0
    ) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.stale_after_s = stale_after_s

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        from rlrun.config.errors import report_user_errors
        from rlrun.config.resolvers import sweep_name

        with report_user_errors():  # a sweep= name that is no folder of its own: refused before anything exists
            sweep_name(config.get("sweep"))
        # the sweep folder, absolute and fixed now: launchers and workers (which may start elsewhere) see this
        with read_write(config), open_dict(config):
            config.hydra.sweep.dir = str(Path(str(config.hydra.sweep.dir)).absolute())
        super().setup(hydra_context=hydra_context, task_function=task_function, config=config)
        warm_up.start(self.launcher)

    def _job(self, overrides: list[str], sweep_dir: Path) -> "Job":
        """Compose one job's config as its launcher will, and name its folder."""
        from rlrun.config.keys import config_hash
        from rlrun.config.resolvers import sweep_subdir
        from rlrun.sweep.plan import Job  # noqa: F811  (here: importing rlrun imports this module)

        assert self.hydra_context is not None and self.config is not None
        cfg = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
        choices = cfg.hydra.runtime.choices
        env_id = OmegaConf.select(cfg, "env.id", default=None)  # names the folder with env=gym and family configs
        label = OmegaConf.select(cfg, "env.name", default=None)  # env.name names the first level
        folder = sweep_subdir(str(choices.get("env")), str(choices.get("algo")), overrides, cfg.seed, env_id, label)
        task = copy.deepcopy(cfg)  # what the job sees: Hydra's run_job drops the hydra node
        with read_write(task), open_dict(task):
            del task["hydra"]
        return Job(overrides, folder, sweep_dir / folder, config_hash(task), config=task)

    def sweep(self, arguments: list[str]) -> None:
        """Plan every job, launch those to run, record the sweep; exit with the sweep's status."""
        from rlrun.config.errors import report_user_errors
        from rlrun.record.provenance import command_line
        from rlrun.sweep import runner
        from rlrun.sweep.cancel import queued_job_canceller
        from rlrun.sweep.plan import decide, refuse_collisions, refuse_common_mistake

        assert self.config is not None and self.launcher is not None and self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        params = [f"{key}={value}" for key, value in self.params.items()]  # as BasicSweeper.sweep reads them
        overrides = parser.parse_overrides([*params, *arguments])
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        jobs = [self._job(list(job), sweep_dir) for batch in self.split_arguments(overrides, None) for job in batch]
        with report_user_errors():
            refuse_collisions(jobs)
            for job in jobs:
                decide(job, self.stale_after_s)
            refuse_common_mistake(jobs)  # imports torch and builds a model, while joblib's fork server imports
            _claim(sweep_dir)
            for job in jobs:  # again, now that no other sweep writes here: one may have ended meanwhile
                decide(job, self.stale_after_s)
            group = runner.tracking_group(jobs, sweep_dir)  # a tracking service's sweep run, before any job
        info = {"command": command_line(), "launcher": self.config.hydra.runtime.choices.get("hydra/launcher")}
        launcher = self.launcher
        status = runner.run(
            jobs,
            lambda batch, first: launcher.launch(batch, initial_job_idx=first),
            sweep_dir,
            info,
            self.max_batch_size,
            jobs_elsewhere=not isinstance(launcher, BasicLauncher),
            on_stop=queued_job_canceller(self.config.hydra.launcher),
            group=group,
        )
        if status:
            sys.exit(status)
