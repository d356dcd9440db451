"""Continuing a run to a larger budget: ``resume=RUN total_timesteps=N`` (DESIGN.md, "Keys").

A continuation trains on, in the run's own folder, from its final state: the newest snapshot of an interrupted
run, or the snapshot a completed run writes at its last step (model, optimiser, replay buffer, normalisation
statistics, random generators; :mod:`rlrun.run.resume_state`). The run's ``config.yaml`` then says
``total_timesteps: N``, and ``run.json`` its new ``total_timesteps`` and ``config_hash`` and, in ``budgets``, each
budget it was trained to in order; the run's identity (everything in its config but ``total_timesteps``) stays.

The schedules' rule: SB3 computes a schedule's progress as ``1 - num_timesteps / total``, and a continuation learns
with ``reset_num_timesteps=False`` towards the new total, so learning-rate, clip-range and exploration schedules
span the new budget as if the run had been planned for it; they never start over from their first value, as
RL Zoo's ``-i`` (which counts steps from 0 again) has them do. The rule is printed when a continuation starts.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from rlrun.config.errors import UserError
from rlrun.config.keys import config_hash, override_key
from rlrun.record import signatures
from rlrun.record.formats import write_text
from rlrun.record.run_record import RunRecord
from rlrun.run import resume_state, snapshots

log = logging.getLogger("rlrun")

KEY = "total_timesteps"


def budget(text: str, run_dir: Path) -> int:
    """The ``total_timesteps=`` value of a continuation's command line, as an integer."""
    try:
        return int(text)
    except ValueError:
        raise UserError(
            f"resume={run_dir} {KEY}={text}: not a whole number of env steps",
            f"give the budget to continue the run to, e.g. {KEY}=200000",
        ) from None


def target(run_dir: Path, total: int) -> tuple[dict[str, Any], Path]:
    """Check a continuation of ``run_dir`` to ``total`` steps: its ``run.json`` and the snapshot to train on from
    (the newest of an interrupted run, the one at the last step of a completed run). A budget not above the
    run's is refused, as is a completed run without a snapshot of its last step."""
    record, snapshot = resume_state.load_target(run_dir)
    planned, reached = int(record[KEY]), int(record["timesteps"])
    if total <= max(planned, reached):
        finish = (
            f"resume={run_dir} without {KEY}= to finish its budget of {planned}, or "
            if record["status"] != "completed"
            else ""
        )
        raise UserError(
            f"resume={run_dir} {KEY}={total}: the run was planned for {planned} steps and reached {reached}; "
            f"a continuation trains to a larger budget",
            f"{finish}give {KEY}= above {max(planned, reached)}, e.g. {KEY}={2 * max(planned, reached)}",
        )
    if snapshot is None:  # completed: its final state is the snapshot at its last step
        final = run_dir / "snapshots" / snapshots.snapshot_name(reached)
        snapshot = resume_state.check_target(run_dir, record, completed_too=True) if final.is_dir() else None
        if snapshot != final:
            raise UserError(
                f"resume={run_dir} {KEY}={total}: the run has no complete snapshot of its last step {reached} (runs "
                "completed before rlrun wrote a final snapshot cannot be trained on)",
                f"start a new run with {KEY}={total}",
            )
    return record, snapshot


def changes(total: int | None) -> dict[str, Any]:
    """What a continuation changes in the run's config: its ``total_timesteps`` (nothing for a plain resume)."""
    return {} if total is None else {KEY: total}


def _rewrite_config(run_dir: Path, total: int) -> None:
    """``config.yaml`` with ``total_timesteps: total``, every other line as it was."""
    path = run_dir / "config.yaml"
    text, count = re.subn(rf"^{KEY}: .*$", f"{KEY}: {total}", path.read_text(), count=1, flags=re.MULTILINE)
    if not count:  # not the top-level line rlrun writes: through OmegaConf
        cfg = OmegaConf.load(path)
        assert isinstance(cfg, DictConfig)  # resume= refused a config.yaml that is not a mapping
        cfg[KEY] = total
        text = OmegaConf.to_yaml(cfg)
    write_text(path, text, durable=True)


def extend(run_dir: Path, data: dict[str, Any], cfg: DictConfig, step: int) -> None:
    """Record the continuation of the run in ``run_dir`` from ``step`` to ``cfg.total_timesteps``: its
    ``config.yaml``, and in ``data`` (run.json) ``total_timesteps``, ``config_hash``, ``budgets`` and the
    ``total_timesteps=`` override; both signed again. Prints the schedules' rule."""
    total = int(cfg[KEY])
    budgets = [*data.get("budgets", [data[KEY]]), total]
    _rewrite_config(run_dir, total)
    overrides = [o for o in data.get("overrides", []) if override_key(o) != KEY]
    data.update(
        {KEY: total, "config_hash": config_hash(cfg), "budgets": budgets, "overrides": [*overrides, f"{KEY}={total}"]}
    )
    RunRecord(run_dir, data).save()
    signatures.sign_run(run_dir)  # config.yaml changed: the run manifest covers it again
    log.info(
        "continuing %s from step %d to %s=%d (budgets %s): schedules (learning rate, clip range, exploration) "
        "span %d steps as if the run had been planned for them, so they go on from their value at step %d of "
        "that plan and never start over (docs/runs.md, Continuing a run)",
        run_dir,
        step,
        KEY,
        total,
        " -> ".join(str(b) for b in budgets),
        total,
        step,
    )
