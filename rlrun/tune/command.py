"""What ``rlrun-tune`` does once Hydra composed its config: check the command (``tune.*`` keys, the search space,
the config the trials train), fix the study's setup (:func:`make_setup`), then run or continue the study and
report on it (:func:`run`)."""

from __future__ import annotations

import fcntl
import logging
import shlex
import sys
from pathlib import Path

import hydra
import optuna
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from rlrun.config.budget import fit_to_budget
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.keys import override_key
from rlrun.config.resolvers import env_name
from rlrun.tune.settings import check_tune_keys
from rlrun.tune.space import check_against, parse_space
from rlrun.tune.study import JOURNAL, Setup, counts, make_storage, open_study, optimize, progress

log = logging.getLogger("rlrun.tune")

STUDIES = Path("outputs/tune")
NOT_PASSED_ON = ("tune", "search_space", "progress_bar")  # overrides that are rlrun-tune's own, not the runs'
STOP_STATUSES = (130, 143)  # SIGINT, SIGTERM: a study stopped by the user or a scheduler


def make_setup(cfg: DictConfig) -> Setup:
    """Check the command (tune.* keys, search space, the config the trials train) and fix the study's setup.

    Raises :class:`UserError` before anything is written.
    """
    from rlrun.run.dry_run import preflight  # SB3 and torch: loaded once the command line has been read

    hydra_cfg = HydraConfig.get()
    choices, task = hydra_cfg.runtime.choices, list(hydra_cfg.overrides.task)
    check_tune_keys(cfg.tune, task)
    overrides = [o for o in task if override_key(o).split(".")[0] not in NOT_PASSED_ON]
    space = choices.get("search_space")
    source = f"search_space={space}" if space else f"for algo={choices.get('algo')} (none found)"
    params = parse_space(OmegaConf.to_container(cfg.search_space) if "search_space" in cfg else None, source)
    cfg = fit_to_budget(cfg, task)[0]  # as each trial's run fits its config to a budget of the command line's
    preflight(cfg)
    check_against(params, cfg)
    name = (
        cfg.tune.study
        or f"{env_name(choices.get('env'), *(OmegaConf.select(cfg, f'env.{k}', default=None) for k in ('id', 'name')))}"
        f"-{choices.get('algo')}"
    )
    config_dirs = [
        s.path.removeprefix("file://") for s in hydra_cfg.runtime.config_sources if s.provider == "command-line"
    ]
    return Setup(
        name=name,
        folder=STUDIES / name,
        storage_url=cfg.tune.storage,
        env=str(choices.get("env")),
        algo=str(choices.get("algo")),
        overrides=overrides,
        group_overrides=[o for o in overrides if override_key(o) in choices],
        hydra_args=[f"--config-dir={d}" for d in config_dirs]
        + [o for o in hydra_cfg.overrides.hydra if override_key(o) == "hydra.searchpath"],
        params=params,
        base=cfg,
        tune=dict(OmegaConf.to_container(cfg.tune)),  # type: ignore[arg-type]
    )


def say_stopped(setup: Setup, study: optuna.Study) -> None:
    """What a stopped study kept and the command that continues it, as ``rlrun`` says of a stopped run."""
    argv0 = sys.argv[0]
    prog = "python -m rlrun.cli.tune" if argv0.endswith(("cli/tune.py", "__main__.py")) else Path(argv0).name
    again = " ".join([prog, *map(shlex.quote, sys.argv[1:])])
    log.info(
        "rlrun-tune stopped: study %s in %s keeps its finished trials, %s; the trials in flight are tried again. "
        "The same command continues it: %s",
        setup.name,
        setup.folder,
        progress(study, setup.tune["trials"]),
        again,
    )


def first_error(study: optuna.Study) -> str:
    failed = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.FAIL,))
    errors = [t.user_attrs["error"] for t in failed if "error" in t.user_attrs]
    return errors[0] if errors else "no trial completed"


def open_or_report(setup: Setup) -> tuple[optuna.Study, optuna.storages.BaseStorage]:
    """The study to continue (or, with tune.report=true, the existing one to report on)."""
    if setup.tune["report"] and setup.storage_url is None and not (setup.folder / JOURNAL).is_file():
        raise UserError(f"tune.report=true: no study in {setup.folder}", "run the study first (without tune.report)")
    storage = make_storage(setup)
    if setup.tune["report"] and setup.name not in optuna.study.get_all_study_names(storage):
        raise UserError(f"tune.report=true: {setup.storage_url} holds no study {setup.name}", "check tune.study")
    return open_study(setup, storage), storage


def run(setup: Setup) -> int:
    """Run (or continue) the study, then report on it; returns the exit status."""
    with report_user_errors("rlrun-tune"):
        study, storage = open_or_report(setup)
    if not setup.tune["report"]:
        log.info(
            "study %s in %s: %d trials of %d seeds", setup.name, setup.folder, setup.tune["trials"], setup.tune["seeds"]
        )
        try:
            optimize(setup, study, storage)
        except (KeyboardInterrupt, SystemExit) as stop:  # SIGINT; SIGTERM exits 143 (rlrun.cli.tune)
            if isinstance(stop, KeyboardInterrupt) or stop.code in STOP_STATUSES:
                say_stopped(setup, study)
            raise
    n = counts(study)
    if n["complete"] == 0:
        print(
            f"rlrun-tune: no trial of study {setup.name} completed; the first error: {first_error(study)}",
            file=sys.stderr,
        )
        return 1
    if n["running"] and not setup.tune["report"]:
        log.info("%d trials still run in other processes: the last to end writes the report", n["running"])
        return 0
    setup.folder.mkdir(parents=True, exist_ok=True)
    with open(setup.folder / ".report.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another rlrun-tune is writing the report of %s", setup.name)
            return 0
        from rlrun.tune.report import write_report  # matplotlib, rlrun-table: only for the report

        with report_user_errors("rlrun-tune"):
            write_report(setup, study, lambda overrides: hydra.compose("config", overrides=overrides))
    return 0
