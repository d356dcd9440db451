"""``hydra/sweeper=rlrun``: Hydra's basic sweeper with rlrun's decisions taken before any job is launched.

The plugin Hydra instantiates (``hydra_plugins/rlrun_sweeper``) is a thin ``Sweeper`` that hands over to this one
when a sweep starts, so a single run imports nothing of :mod:`rlrun.sweep`. The task function Hydra gives the
sweeper is wrapped in :class:`rlrun.sweep.job.SweepTask`, which runs each job as the sweep decided and never raises.

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

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

# Hydra's internals: see the module's docstring
from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from rlrun.sweep import warm_up
from rlrun.sweep.job import MetaTask, SweepTask

if TYPE_CHECKING:
    from rlrun.sweep.plan import Job
    from rlrun.sweep.templates import Templates


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


def _register_slurm_launcher(launcher: DictConfig) -> None:
    """``hydra/launcher=slurm``'s class (``hydra_plugins/rlrun_slurm_launcher``), registered through Hydra's public
    call as :func:`rlrun.cli.entry._register_plugins` registers rlrun's others (Hydra's scan misses editable
    installs); only when the sweep uses it, since it needs the slurm extra."""
    if not str(launcher.get("_target_", "")).startswith("hydra_plugins.rlrun_slurm_launcher."):
        return
    from hydra.core.plugins import Plugins

    from hydra_plugins.rlrun_slurm_launcher.slurm_launcher import RlrunSlurmLauncher

    Plugins.instance().register(RlrunSlurmLauncher)


class RlrunSweeper(BasicSweeper):
    """Cartesian-product sweeps, as Hydra's basic sweeper, that skip, resume, re-run or refuse each job."""

    def __init__(
        self, max_batch_size: int | None = None, params: dict[str, str] | None = None, stale_after_s: float = 600.0
    ) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.stale_after_s = stale_after_s
        self.task: SweepTask | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        from rlrun.config.errors import report_user_errors
        from rlrun.config.resolvers import sweep_name
        from rlrun.sweep.slurm_signal import refuse_unhonoured_signal

        with report_user_errors():  # a sweep= name that is no folder of its own: refused before anything exists
            sweep_name(config.get("sweep"))
            refuse_unhonoured_signal(config.hydra.launcher)  # SLURM's signal before any training: before submitting
        _register_slurm_launcher(config.hydra.launcher)
        # the sweep folder, absolute and fixed now: launchers and workers (which may start elsewhere) see this
        with read_write(config), open_dict(config):
            config.hydra.sweep.dir = str(Path(str(config.hydra.sweep.dir)).absolute())
        self.task = SweepTask(cast(MetaTask, task_function))  # rlrun.cli.main.Task, which has meta()
        super().setup(hydra_context=hydra_context, task_function=self.task, config=config)
        if warm_up.start(self.launcher):  # joblib's workers end with this process, however it ends
            self.task.sweep_pid = os.getpid()

    def _compose(self, overrides: list[str]) -> DictConfig:
        """One job's config as its launcher will compose it (Hydra's node included)."""
        assert self.hydra_context is not None and self.config is not None
        return self.hydra_context.config_loader.load_sweep_config(self.config, overrides)

    def _job(self, overrides: list[str], sweep_dir: Path, templates: "Templates") -> "Job":
        """Compose one job's config (:mod:`rlrun.sweep.templates`), and name its folder."""
        from rlrun.config.budget import fit_to_budget
        from rlrun.config.keys import config_hash
        from rlrun.config.resolvers import sweep_subdir
        from rlrun.sweep.plan import Job  # noqa: F811

        composed = templates.config(overrides)
        task, choices = composed.task, composed.choices
        env_id = OmegaConf.select(task, "env.id", default=None)  # names the folder with env=gym and family configs
        label = OmegaConf.select(task, "env.name", default=None)  # env.name names the first level
        folder = sweep_subdir(str(choices.get("env")), str(choices.get("algo")), overrides, task.seed, env_id, label)
        task, _ = fit_to_budget(task, overrides)  # as the job's run will: its planned hash is the one it records
        return Job(overrides, folder, sweep_dir / folder, config_hash(task), config=task)

    def plan(self, arguments: list[str], sweep_dir: Path) -> tuple[list["Job"], "Templates"]:
        """Every job of the sweep, composed; its size is printed first, and a sweep above
        :data:`rlrun.sweep.size.CONFIRM_ABOVE` jobs is confirmed (a user mistake refused otherwise) before any
        config is composed."""
        from rlrun.config.errors import report_user_errors
        from rlrun.run.following import Ticker, print_clocked
        from rlrun.sweep import size
        from rlrun.sweep.plan import Job  # noqa: F811
        from rlrun.sweep.summary import jobs_word
        from rlrun.sweep.templates import Templates  # noqa: F811

        assert self.config is not None and self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        params = [f"{key}={value}" for key, value in self.params.items()]  # as BasicSweeper.sweep reads them
        overrides = parser.parse_overrides([*params, *arguments])
        planned = [list(job) for batch in self.split_arguments(overrides, None) for job in batch]
        print(f"sweep {sweep_dir}: {jobs_word(len(planned))} planned; composing their configs", flush=True)
        with report_user_errors():
            size.confirm(len(planned), bool(self.config.get("sweep_yes", False)))
        templates = Templates(self._compose, parser.parse_overrides)
        jobs: list[Job] = []  # a line every progress_every seconds meanwhile, what is composed so far
        said = lambda: f"sweep {sweep_dir}: composed {len(jobs)} of {jobs_word(len(planned))}' configs"  # noqa: E731
        with Ticker(float(OmegaConf.select(self.config, "progress_every", default=60)), said, print_clocked):
            jobs.extend(self._job(job, sweep_dir, templates) for job in planned)
        return jobs, templates

    def sweep(self, arguments: list[str]) -> None:
        """Plan every job, launch those to run, record the sweep; exit with the sweep's status."""
        from rlrun.config.errors import report_user_errors
        from rlrun.record.provenance import command_line
        from rlrun.sweep import runner
        from rlrun.sweep.cancel import queued_job_canceller
        from rlrun.sweep.plan import decide, refuse_collisions, refuse_common_mistake

        assert self.config is not None and self.launcher is not None and self.hydra_context is not None
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        jobs, _ = self.plan(arguments, sweep_dir)
        with report_user_errors():
            refuse_collisions(jobs)
            for job in jobs:
                decide(job, self.stale_after_s)
            refuse_common_mistake(jobs)  # imports torch and builds a model, while joblib's fork server imports
            _claim(sweep_dir)
            for job in jobs:  # again, now that no other sweep writes here: one may have ended meanwhile
                decide(job, self.stale_after_s)
            group = runner.tracking_group(jobs, sweep_dir)  # a tracking service's sweep run, before any job
        assert self.task is not None
        self.task.actions.update({job.folder: job.action for job in jobs})  # pickled with the task at launch
        self.task.tracking_group = group.record if group is not None else {}  # so is the sweep's tracked run
        info = {"command": command_line(), "launcher": self.config.hydra.runtime.choices.get("hydra/launcher")}
        self.task.command = info["command"]  # each job's run.json names the sweep's command, whatever runs the job
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
