"""A study and its trials: storage, sampler and pruner, the trial loop, and recovery of abandoned trials.

The study lives in Optuna's journal file in its folder (or a database, ``tune.storage``), so any number of
``rlrun-tune`` processes can work on it, one after another or at once: each asks for trials while fewer
than ``tune.trials`` are finished or running. ``tune.n_jobs`` trials run at once, each in its own
processes; this loop only watches files, it trains nothing itself. A trial still ``running`` whose process
is gone from this host is marked failed and its values are tried again (the journal has no heartbeat).
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import optuna
from omegaconf import DictConfig, OmegaConf
from optuna.exceptions import ExperimentalWarning, UpdateFinishedTrialError
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from rlrun.config.errors import UserError
from rlrun.record.liveness import pid_alive
from rlrun.tune.seed_runs import POLL_S
from rlrun.tune.seeds_view import SeedsView
from rlrun.tune.space import Param, override
from rlrun.tune.trial import HOST, PID, TrialOutcome, TrialRun

if TYPE_CHECKING:
    from rlrun.tune.tracking import StudyTracking

log = logging.getLogger("rlrun.tune")

JOURNAL = "journal.log"  # the study's journal file in its folder (the default storage)
MEDIAN_STARTUP_TRIALS = 5  # trials completed before the median pruner prunes (RL Zoo's choice)


@dataclass
class Setup:
    """Everything a study needs, checked and fixed before anything is written."""

    name: str  # the study's name (tune.study, default <env>-<algo>)
    folder: Path  # outputs/tune/<study>
    storage_url: str | None  # tune.storage; None: the journal file in the folder
    env: str
    algo: str
    overrides: list[str]  # the command's overrides that set up the runs (not tune.*, search_space)
    group_overrides: list[str]  # those of them that choose config groups (env=, algo=, wrappers=...)
    hydra_args: list[str]  # --config-dir and hydra.searchpath, passed on to every run
    params: list[Param]
    base: DictConfig  # the composed config the search space applies to
    tune: dict[str, Any] = field(default_factory=dict)  # the tune.* keys


def make_storage(setup: Setup) -> optuna.storages.BaseStorage:
    """The journal file in the study folder, or the database at ``tune.storage``."""
    if setup.storage_url is None:
        setup.folder.mkdir(parents=True, exist_ok=True)
        backend = JournalFileBackend(str(setup.folder / JOURNAL))
        return optuna.storages.JournalStorage(backend)
    try:
        return optuna.storages.RDBStorage(setup.storage_url)
    except Exception as error:
        raise UserError(
            f"tune.storage={setup.storage_url} cannot be opened: {type(error).__name__}: {error}",
            "give a database URL, e.g. tune.storage=sqlite:///outputs/tune/study.db, or leave it unset",
        ) from None


def make_sampler(name: str) -> optuna.samplers.BaseSampler:
    """tpe (multivariate, with a constant liar for trials running at once), random or cmaes."""
    warnings.filterwarnings("ignore", category=ExperimentalWarning)
    if name == "random":
        return optuna.samplers.RandomSampler()
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(warn_independent_sampling=False)
    return optuna.samplers.TPESampler(multivariate=True, constant_liar=True)


def make_pruner(name: str, total_timesteps: int, eval_every: int) -> optuna.pruners.BasePruner:
    """median (after 5 trials and a third of the budget), hyperband (over evaluation steps) or none."""
    if name == "median":
        return optuna.pruners.MedianPruner(MEDIAN_STARTUP_TRIALS, n_warmup_steps=total_timesteps // 3)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min(eval_every, total_timesteps), total_timesteps)
    return optuna.pruners.NopPruner()


def open_study(
    setup: Setup, storage: optuna.storages.BaseStorage, pruner: optuna.pruners.BasePruner | None = None
) -> optuna.Study:
    """Create the study or continue it; a study started by another command is refused."""
    known = setup.name in optuna.study.get_all_study_names(storage)
    trials_dir = setup.folder / "trials"
    if not known and trials_dir.is_dir() and any(trials_dir.iterdir()):
        raise UserError(
            f"{trials_dir} holds trials of a study that {setup.storage_url or setup.folder / JOURNAL} does not know",
            "choose another tune.study, or move that folder away",
        )
    study = optuna.create_study(
        storage=storage,
        sampler=make_sampler(setup.tune["sampler"]),
        pruner=pruner or make_pruner(setup.tune["pruner"], setup.base.total_timesteps, setup.base.eval.every),
        study_name=setup.name,
        direction="maximize",
        load_if_exists=True,
    )
    _check_same_command(study, setup)
    return study


def _check_same_command(study: optuna.Study, setup: Setup) -> None:
    """A study continues only with the overrides and objective it began with, and the same categorical
    choices (Optuna cannot change those within a study; ranges may change)."""
    recorded = {"overrides": sorted(setup.overrides), "objective": setup.tune["objective"]}
    for key, value in recorded.items():
        if key not in study.user_attrs:
            study.set_user_attr(key, value)
        elif study.user_attrs[key] != value:
            raise UserError(
                f"study {setup.name} was started with {key} {study.user_attrs[key]}; this command has {value}",
                f"repeat the study's own {key} to continue it, or start another with tune.study=NAME",
            )
    seen = {key: d for trial in study.get_trials(deepcopy=False) for key, d in trial.distributions.items()}
    for param in setup.params:
        before, now = seen.get(param.key), param.distribution
        categorical = isinstance(now, optuna.distributions.CategoricalDistribution)
        if before is not None and (type(before) is not type(now) or (categorical and before != now)):
            raise UserError(
                f"search space entry {param.key} changed since study {setup.name} began (was {before}, now {now})",
                "restore it (Optuna cannot change the kind or the choices of a parameter), or start another "
                "study with tune.study=NAME",
            )


STATES = {
    TrialState.COMPLETE: "complete",
    TrialState.PRUNED: "pruned",
    TrialState.FAIL: "failed",
    TrialState.RUNNING: "running",
    TrialState.WAITING: "waiting",
}


def counts(study: optuna.Study) -> dict[str, int]:
    """Trials by state; ``abandoned``: failed because their process died (tried again, not counted as failed)."""
    found = dict.fromkeys([*STATES.values(), "abandoned"], 0)
    for trial in study.get_trials(deepcopy=False):
        found["abandoned" if "abandoned" in trial.user_attrs else STATES[trial.state]] += 1
    return found


def progress(study: optuna.Study, trials: int) -> str:
    """One line: trials finished, pruned, failed, and the best score so far with its values."""
    n = counts(study)
    done = n["complete"] + n["pruned"] + n["failed"]
    line = f"{done}/{trials} finished ({n['complete']} complete, {n['pruned']} pruned, {n['failed']} failed)"
    if n["complete"]:
        best = study.best_trial
        line += f"; best {best.value:.4g} (trial {best.number}): " + " ".join(best.user_attrs.get("overrides", []))
    return line


def abandon(study: optuna.Study, storage: optuna.storages.BaseStorage, trial: FrozenTrial, reason: str) -> None:
    """Mark a trial nobody is running any more failed (``abandoned``) and enqueue its values again."""
    study_id = storage.get_study_id_from_name(study.study_name)
    trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
    try:
        storage.set_trial_user_attr(trial_id, "abandoned", reason)
        storage.set_trial_state_values(trial_id, TrialState.FAIL)
    except UpdateFinishedTrialError:
        return  # finished meanwhile, or another rlrun-tune recovered it first
    study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})
    log.info("trial %d: %s; its values are tried again", trial.number, reason)


def recover(study: optuna.Study, storage: optuna.storages.BaseStorage) -> None:
    """Abandon the trials left running by an rlrun-tune process of this host that is gone."""
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        host, pid = trial.user_attrs.get("host"), trial.user_attrs.get("pid")
        if host == HOST and isinstance(pid, int) and pid != PID and not pid_alive(pid):
            abandon(study, storage, trial, f"rlrun-tune (pid {pid} on {host}) ended without finishing it")


def _next_trial(setup: Setup, study: optuna.Study, storage: optuna.storages.BaseStorage) -> TrialRun | None:
    """A new trial, if the study still needs one."""
    recover(study, storage)
    n = counts(study)
    if n["complete"] + n["pruned"] + n["failed"] + n["running"] >= setup.tune["trials"]:
        return None
    trial = study.ask()
    overrides = [override(setup.base, param.key, param.suggest(trial)) for param in setup.params]
    trial.set_user_attr("overrides", overrides)
    args = [*setup.hydra_args, *setup.overrides, *overrides, "progress_bar=false"]
    folder = setup.folder / "trials" / str(trial.number)
    return TrialRun(trial, folder, setup.tune["seeds"], args, setup.tune["objective"])


def _finish(study: optuna.Study, run: TrialRun, outcome: TrialOutcome) -> None:
    number = run.trial.number
    if outcome.state == TrialState.FAIL:
        run.trial.set_user_attr("error", outcome.error)
        log.info("trial %d failed: %s", number, outcome.error)
    elif outcome.state == TrialState.PRUNED:
        log.info("trial %d pruned at step %d (%.4g)", number, outcome.step, outcome.value)
    else:
        log.info("trial %d complete: %.4g", number, outcome.value)
    study.tell(run.trial, outcome.value if outcome.state == TrialState.COMPLETE else None, state=outcome.state)


def _loop(
    setup: Setup,
    study: optuna.Study,
    storage: optuna.storages.BaseStorage,
    running: list[TrialRun],
    tracked: StudyTracking | None,
    view: SeedsView,
) -> None:
    """Start trials while the study needs them, ``tune.n_jobs`` at once, and finish each as it ends (``running``:
    those started, for the caller to stop); ``view``'s head follows the study's counts."""
    view.head = f"study {setup.name}: {progress(study, setup.tune['trials'])}"
    while True:
        while len(running) < setup.tune["n_jobs"] and (new := _next_trial(setup, study, storage)) is not None:
            tracked.start(new) if tracked is not None else new.start()
            running.append(new)
            values = " ".join(new.trial.user_attrs["overrides"])
            log.info("trial %d started: %s in %s", new.trial.number, values, new.folder)
        if not running:
            return
        for run in list(running):
            if (outcome := run.poll()) is not None:
                running.remove(run)
                _finish(study, run, outcome)
                if tracked is not None:
                    tracked.finish(run, outcome)
                log.info("%s", progress(study, setup.tune["trials"]))
                view.head = f"study {setup.name}: {progress(study, setup.tune['trials'])}"
        time.sleep(POLL_S)


def optimize(setup: Setup, study: optuna.Study, storage: optuna.storages.BaseStorage) -> None:
    """Run trials until the study has ``tune.trials`` finished or running ones, ``tune.n_jobs`` at once.

    Stopped (Ctrl-C, SIGTERM), it stops its trials' runs and gives the trials back to the study.
    """
    from rlrun.tune.tracking import StudyTracking  # noqa: F811

    running: list[TrialRun] = []
    tracked = StudyTracking.open(
        setup.base, setup.folder, setup.name
    )  # with logger=[..., mlflow]: the study's run, a run per trial under it
    stopped = True
    every_s = float(OmegaConf.select(setup.base, "progress_every", default=60))
    view = SeedsView(every_s, lambda: [(run.title(), run.runs) for run in list(running)])
    try:
        with view:
            _loop(setup, study, storage, running, tracked, view)
        stopped = False
    finally:
        for run in running:
            run.stop()
            frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == run.trial.number)
            abandon(study, storage, frozen, "rlrun-tune was stopped")
        if tracked is not None:
            tracked.close(stopped)
