"""Group runs that differ only by seed, name each group, and count the seeds planned for it.

Runs group by ``config_hash``, or by the values of the ``--by`` keys; env, algo and ``total_timesteps`` are
always part of a group's identity, so they are never averaged together. A group's name is ``<env>-<algo>``
followed by the overrides that set it apart from the other groups of that env and algo (DESIGN.md, "Tables").
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.config.keys import ABSENT, override_key, training_overrides
from rlrun.record import reading, signatures
from rlrun.record.fields import as_text, shown
from rlrun.table.runs import Group, Run

log = logging.getLogger("rlrun.table")

NAMED = ("env", "algo")  # already in every group's name


def group_runs(runs: Sequence[Run], by: Sequence[str] | None = None) -> list[Group]:
    """The groups of ``runs``, named, with their planned seeds, ordered by env, algo, then overrides."""
    if by is not None:
        _check_by(runs, by)
    members: dict[tuple[Any, ...], list[Run]] = {}
    for run in runs:
        identity = (run.env, run.env_id, run.algo, run.record["total_timesteps"])
        rest = (run.record["config_hash"],) if by is None else tuple(_dump(run.value(key)) for key in by)
        members.setdefault(identity + rest, []).append(run)
    groups = []
    for key, group_runs_ in members.items():
        ordered = sorted(group_runs_, key=lambda run: (run.record["seed"], str(run.folder.resolve())))
        group = Group(env=key[0], env_id=key[1], algo=key[2], total_timesteps=key[3], runs=ordered)
        overrides = _by_overrides(ordered[0], by) if by is not None else _common_overrides(ordered)
        group.overrides = [as_text(override) for override in overrides]
        groups.append(group)
    _name(groups, keep_all=by is not None)
    _count_planned(groups)
    return sorted(groups, key=_order)


def note_continued(groups: Sequence[Group]) -> None:
    """Say (one line each) which groups mix continued runs with runs trained straight to the same budget: their
    configs agree, but a continued run's schedules were planned for a smaller budget until it was continued."""
    for group in groups:
        continued = [run for run in group.runs if run.continued]
        if continued and len(continued) < len(group.runs):
            firsts = sorted({str(run.record["budgets"][0]) for run in continued}, key=int)
            log.warning(
                "group %r mixes %d continued run(s) (first trained to %s steps, then continued to %d) with %d run(s) "
                "trained straight to %d steps",
                group.name,
                len(continued),
                " or ".join(firsts),
                group.total_timesteps,
                len(group.runs) - len(continued),
                group.total_timesteps,
            )


def _check_by(runs: Sequence[Run], by: Sequence[str]) -> None:
    for key in by:
        if all(run.value(key) is ABSENT for run in runs):
            raise UserError(
                f"--by {key}: no run's config.yaml has this key",
                "give dotted keys of the resolved config, comma-separated, e.g. --by algo.n_steps,env.n_envs",
            )


def _json(value: Any) -> str:
    """A config value as JSON; YAML's dates (``default=str``) and mappings with keys of mixed types too."""
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:  # keys that cannot be sorted together
        return json.dumps(value, default=str)


def _dump(value: Any) -> str:
    return "<absent>" if value is ABSENT else _json(value)


def _label_value(value: Any) -> str:
    """A config value for a group's label, read like an override: strings bare, the rest as JSON/YAML flow
    (for people: :func:`rlrun.config.keys.override_value` writes what Hydra parses)."""
    if value is ABSENT:
        return "null"
    return value if isinstance(value, str) else _json(value)


def _by_overrides(run: Run, by: Sequence[str]) -> list[str]:
    return [f"{key}={_label_value(run.value(key))}" for key in by]


def _common_overrides(runs: Sequence[Run]) -> list[str]:
    """The training overrides every run of the group was given, in the first run's order."""
    lists = [[o for o in training_overrides(run.record["overrides"]) if override_key(o) not in NAMED] for run in runs]
    common = set(lists[0]).intersection(*lists[1:])
    return [override for override in dict.fromkeys(lists[0]) if override in common]


def _name(groups: list[Group], keep_all: bool) -> None:
    """Keep the overrides that set a group apart from the others of its env and algo; make names unique."""
    by_pair: dict[tuple[str, str], list[Group]] = {}
    for group in groups:
        by_pair.setdefault((group.env, group.algo), []).append(group)
    for (env, algo), pair in by_pair.items():
        shared = set() if keep_all else set.intersection(*(set(g.overrides) for g in pair))
        budgets = {g.total_timesteps for g in pair}
        for group in pair:
            group.overrides = [o for o in group.overrides if keep_all or o not in shared]
            if len(budgets) > 1 and not any(o.startswith("total_timesteps=") for o in group.overrides):
                group.overrides.append(f"total_timesteps={group.total_timesteps}")
            group.name = " ".join([f"{env}-{algo}", *group.overrides])
    names: dict[str, list[Group]] = {}
    for group in groups:
        names.setdefault(group.name, []).append(group)
    for same in names.values():
        if len(same) > 1:  # e.g. the same overrides over two versions of a preset
            for group in same:
                config = as_text(group.runs[0].record["config_hash"][:8])
                group.overrides.append(f"config={config}")
                group.name = f"{group.name} config={config}"


def _sort_value(text: str) -> tuple[int, float, str]:
    """Numbers in numeric order, then text; so ``n_steps=64`` comes before ``n_steps=128``."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _order(group: Group) -> tuple[Any, ...]:
    overrides = [(o.split("=", 1)[0], _sort_value(o.split("=", 1)[-1])) for o in group.overrides]
    return (group.env, group.algo, group.total_timesteps, overrides, group.name)


Plans = dict[Path, tuple[set[Path], bool]]  # a sweep's folder -> its sweep.json's jobs, and whether it is signed


def _sweep_jobs(run_dir: Path, cache: Plans) -> tuple[Path | None, set[Path], bool]:
    """The ``sweep.json`` of the sweep holding ``run_dir`` (None when none), the job folders it lists, and whether
    it is signed under this user's key (a sweep signs the one it writes)."""
    for folder in run_dir.resolve().parents:
        path = folder / "sweep.json"
        if folder not in cache and os.path.lexists(path):
            cache[folder] = _read_plan(path)
        if folder in cache:
            return path, *cache[folder]
    return None, set(), True


def _read_plan(path: Path) -> tuple[set[Path], bool]:
    """The job folders a ``sweep.json`` lists, and whether it is signed; none when it cannot be read (said once)."""
    try:
        data = reading.load_json(path)  # within bounds, a regular file: a FIFO is never waited on
        return {(path.parent / job).resolve() for job in _job_folders(data)}, signatures.verifies(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, reading.OverBound) as error:
        log.warning("ignoring %s: it cannot be read (%s); seeds planned count the runs found", path, error)
    except ValueError as error:
        log.warning("ignoring %s: %s; seeds planned count the runs found", path, error)
    return set(), True


def _job_folders(data: Any) -> list[str]:
    """The ``folder`` of each job a ``sweep.json`` lists; raises ``ValueError`` naming the field that is not
    of the type DESIGN.md gives it ("Sweeps")."""
    if not isinstance(data, dict):
        raise ValueError(f"it holds {type(data).__name__}, not an object")
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not all(isinstance(job, dict) for job in jobs):
        raise ValueError(f"its 'jobs' is {shown(jobs)}, not a list of objects")
    for job in jobs:
        folder = job.get("folder")
        if not isinstance(folder, str) or not folder or Path(folder).is_absolute():
            raise ValueError(f"a job's 'folder' is {shown(folder)}, not a folder name relative to the sweep's")
    return [job["folder"] for job in jobs]


def _count_planned(groups: list[Group]) -> None:
    """Seeds planned: the group's runs of any status, plus the jobs ``sweep.json`` lists beside them; a
    ``sweep.json`` not signed that adds jobs is noted in ``group.unsigned_plans``."""
    cache: Plans = {}
    for group in groups:
        folders = {run.folder.resolve() for run in group.runs}
        parents = {folder.parent for folder in folders}
        for run in group.runs:
            path, jobs, signed = _sweep_jobs(run.folder, cache)
            added = {job for job in jobs if job.parent in parents} - folders
            folders |= added
            if added and not signed and path is not None and path not in group.unsigned_plans:
                group.unsigned_plans.append(path)
        group.planned = len(folders)
