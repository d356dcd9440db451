"""The winner of a study, re-validated: ``best.yaml``, fresh-seed runs against the starting point, table, plots.

``best.yaml`` is a ready preset: everything the best trial trained with that differs from SB3's defaults
for the pair (the pair's preset, the study's overrides, the tuned values), as ``conf/tuned/*.yaml`` holds
it. The best values and the starting point (the pair's preset if there is one, else SB3's defaults;
always with the study's overrides) are then trained on ``tune.validate_seeds`` seeds from 1000, seeds no
trial used, and compared by :func:`rlrun.table.write.write_tables`. Validation runs already completed are kept.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import optuna
from omegaconf import DictConfig, OmegaConf

from rlrun.config.keys import NON_TRAINING_KEYS
from rlrun.config.resolvers import env_name
from rlrun.record.formats import ATTEMPTS
from rlrun.record.run_state import read_state
from rlrun.tune.seed_runs import SeedRun, cores, run_all
from rlrun.tune.seeds_view import SeedsView
from rlrun.tune.study import Setup

log = logging.getLogger("rlrun.tune")

VALIDATION_SEED = 1000  # the first seed of re-validation; trials use 0 .. tune.seeds-1
# Keys a preset leaves alone: those that do not change training, but eval (presets set eval.every).
NOT_IN_PRESET = {*NON_TRAINING_KEYS, "search_space", "hydra"} - {"eval"}
SCORES = {"iqm": "IQM of final returns", "auc": "IQM of mean evaluation returns", "success": "IQM of success rates"}

Compose = Callable[[list[str]], DictConfig]  # hydra.compose("config", overrides=...) of the running app


def _diff(target: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``target`` that ``base`` lacks or holds otherwise, nested mappings compared by key
    (an object of another ``_target_`` is given whole)."""
    out = {}
    for key, value in target.items():
        other = base.get(key)
        if isinstance(value, dict) and isinstance(other, dict) and value.get("_target_") == other.get("_target_"):
            if inner := _diff(value, other):
                out[key] = inner
        elif key not in base or base[key] != value:
            out[key] = value
    return out


def best_preset(setup: Setup, best: optuna.trial.FrozenTrial, compose: Compose) -> str:
    """The text of ``best.yaml`` for the study's best trial."""
    groups = [o for o in setup.group_overrides if not o.lstrip("~+").startswith("tuned")]
    target = OmegaConf.to_container(compose([*setup.overrides, *best.user_attrs["overrides"]]), resolve=True)
    base = OmegaConf.to_container(compose([*groups, "~tuned"]), resolve=True)
    changed = _diff(cast(dict, target), cast(dict, base))
    preset = {key: value for key, value in changed.items() if key not in NOT_IN_PRESET}
    seeds = setup.tune["seeds"]
    score = f"{SCORES[setup.tune['objective']]} {best.value:.4g} over seeds 0-{seeds - 1}"
    name = f"{setup.env}_{setup.algo}"
    tuned = textwrap.wrap(
        " ".join(best.user_attrs["overrides"]), 110, initial_indent="# Tuned: ", subsequent_indent="#   "
    )
    header = [
        "# @package _global_",
        f"# Preset for env={setup.env} algo={setup.algo}, found by rlrun-tune (study {setup.name},",
        f"# trial {best.number}: {score}).",
        f"# Also written as {setup.folder / 'tuned' / 'best.yaml'}; use it as conf/tuned/{name}.yaml in a clone, or",
        "# as <dir>/tuned/<name>.yaml with --config-dir <dir> tuned=<name>.",
        *tuned,
        f"# Train with: rlrun --config-dir {setup.folder} {' '.join([*groups, 'tuned=best'])}",
    ]
    return "\n".join(header) + "\n" + OmegaConf.to_yaml(OmegaConf.create(preset))


def _completed(run: SeedRun, otherwise: str) -> dict[str, Any] | None:
    """The validation run's ``run.json`` if it completed. Its fields are checked for their types
    (:mod:`rlrun.record.fields`): a damaged one counts as not completed, with one warning naming the file and the
    field and what is done instead (``otherwise``)."""
    if not (run.folder / "run.json").exists():
        return None
    record, problem = run.checked_record()
    if record is None:
        log.warning("damaged validation run, %s: %s", otherwise, problem)
        return None
    return record if record["status"] == "completed" else None


def _set_aside(run: SeedRun, study_dir: Path) -> None:
    """Move an unfinished validation run out of the way (kept under ``attempts/``), to train it again."""
    if not run.folder.exists():
        return
    attempts = study_dir / ATTEMPTS / run.folder.relative_to(study_dir / "validation")
    k = 0
    while (attempts / str(k)).exists():
        k += 1
    attempts.mkdir(parents=True, exist_ok=True)
    shutil.move(str(run.folder), attempts / str(k))


def _validation_line(run: SeedRun, status: int, study_dir: Path) -> str:
    """``trial-7/seed-1000: mean return 0.912`` (or ``failed``), as a validation run ends."""
    final = ((run.record() or {}).get("final") or {}) if status == 0 else {}
    outcome = f"mean return {final['mean_return']:.3f}" if final else "failed"
    return f"{run.folder.relative_to(study_dir / 'validation')}: {outcome}"


def _running(run: SeedRun) -> bool:
    """Whether the validation run trains now, as its folder says (its process is polled by one thread only)."""
    return read_state(run.folder).status == "running"


def validate(setup: Setup, best: optuna.trial.FrozenTrial) -> Path | None:
    """Train the best values and the starting point on fresh seeds; write the comparison table."""
    from rlrun.table.write import write_tables  # loaded only when a report is written

    seeds = range(VALIDATION_SEED, VALIDATION_SEED + setup.tune["validate_seeds"])
    common = [*setup.hydra_args, *setup.overrides]
    tuned = best.user_attrs["overrides"]
    folders = {
        "best": setup.folder / "validation" / f"trial-{best.number}",
        "start": setup.folder / "validation" / "start",
    }
    runs = [SeedRun(folders["best"] / f"seed-{s}", s, [*common, *tuned, "progress_bar=false"]) for s in seeds]
    runs += [SeedRun(folders["start"] / f"seed-{s}", s, [*common, "progress_bar=false"]) for s in seeds]
    pending = [run for run in runs if _completed(run, "trained again (the damaged one kept under attempts/)") is None]
    for run in pending:
        _set_aside(run, setup.folder)
    log.info(
        "validating trial %d and the starting point on seeds %d-%d: %d runs (%d kept from before)",
        best.number, seeds[0], seeds[-1], len(pending), len(runs) - len(pending),
    )  # fmt: skip
    failed: list[str] = []
    ended = itertools.count(1)

    def report(run: SeedRun, status: int) -> None:
        if status:
            failed.append(f"{run.folder}: {run.error()}")
        log.info("validation [%d/%d] %s", next(ended), len(pending), _validation_line(run, status, setup.folder))

    every_s = float(OmegaConf.select(setup.base, "progress_every", default=60))
    with SeedsView(every_s, lambda: [("validation", [run for run in pending if _running(run)])]):
        run_all(pending, cores(), report)
    for line in failed:
        log.warning("validation run failed: %s", line)
    done = [
        [record for record in (_completed(run, "left out of the comparison") for run in side) if record is not None]
        for side in (runs[: len(seeds)], runs[len(seeds) :])
    ]
    if not all(done):
        log.warning("no table: a side of the comparison has no completed run")
        return None
    name = env_name(setup.env, *(OmegaConf.select(setup.base, f"env.{k}", default=None) for k in ("id", "name")))
    pair = f"{name}-{setup.algo}"  # as run.json's
    compare: tuple[str, str] | None = (" ".join([pair, *tuned]), pair)  # DESIGN.md, "Tables": group names
    if done[0][0]["config_hash"] == done[1][0]["config_hash"]:
        log.info("the best values are the starting point's: one group, nothing to compare")
        compare = None
    metric = "success" if setup.tune["objective"] == "success" else "return"
    return write_tables(list(folders.values()), setup.folder, metric=metric, compare=compare)


def plots(study: optuna.Study, folder: Path) -> list[Path]:
    """Optuna's optimisation history and parameter importances (PED-ANOVA: no extra dependency) as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as optuna_plots

    complete = len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))
    evaluator = optuna.importance.PedAnovaImportanceEvaluator()
    wanted = {
        "history.png": (1, lambda: optuna_plots.plot_optimization_history(study)),
        "importance.png": (2, lambda: optuna_plots.plot_param_importances(study, evaluator=evaluator)),
    }
    written = []
    for name, (needs, draw) in wanted.items():
        if complete < needs:
            log.info("%s not drawn: it needs %d completed trial(s), the study has %d", name, needs, complete)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna marks its matplotlib plots experimental
            axes = draw()
        figure = cast(plt.Figure, axes.figure)
        figure.savefig(folder / name, dpi=120, bbox_inches="tight")
        plt.close(figure)
        written.append(folder / name)
    return written


def write_report(setup: Setup, study: optuna.Study, compose: Compose) -> None:
    """best.yaml, the validation table (unless ``tune.validate_seeds=0``) and the plots, in the study folder."""
    best = study.best_trial
    preset = best_preset(setup, best, compose)
    (setup.folder / "best.yaml").write_text(preset)
    (setup.folder / "tuned").mkdir(exist_ok=True)  # so that --config-dir <study> tuned=best finds it
    (setup.folder / "tuned" / "best.yaml").write_text(preset)
    log.info("best values (trial %d, %.4g): %s", best.number, best.value, " ".join(best.user_attrs["overrides"]))
    log.info("preset written: %s", setup.folder / "best.yaml")
    table = validate(setup, best) if setup.tune["validate_seeds"] > 0 else None
    for path in plots(study, setup.folder):
        log.info("plot written: %s", path)
    if table is not None:  # the table and the comparison; the footer (provenance) stays in the file
        lines = table.read_text().split("\n<sub>")[0].strip()
        log.info(
            "validation on seeds %d-%d (%s):\n%s",
            VALIDATION_SEED,
            VALIDATION_SEED + setup.tune["validate_seeds"] - 1,
            table,
            lines,
        )
