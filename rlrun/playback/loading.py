"""A saved run, loaded for use: its model and an evaluation env built from the run's own ``config.yaml``
(upgraded if an older rlrun wrote it), with its VecNormalize statistics. :func:`load_run` is the notebook
API (``rlrun.load_run``); ``rlrun-eval`` (:mod:`rlrun.cli.eval`) is its command line.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.playback import received
from rlrun.record import regular_files, signatures
from rlrun.record.fields import config_problem, read_config
from rlrun.record.formats import read_json
from rlrun.run import snapshots
from rlrun.run.training import configure_torch

CHOICES = "final, latest, best or a step number"
log = logging.getLogger("rlrun")


def _statistics(run_dir: Path, folder: Path, data_only: bool) -> Path | None:
    """The VecNormalize statistics in ``folder``: SB3's pickle, or with ``data_only`` the ``.npz`` beside it."""
    pickled, data = folder / "vecnormalize.pkl", folder / "vecnormalize.npz"
    if not data_only:
        return pickled if pickled.is_file() else None
    if pickled.is_file() and not data.is_file():
        raise UserError(
            f"loading {run_dir}: the folder is not trusted, and its normalisation statistics are only a pickle "
            f"({pickled}: rlrun wrote no vecnormalize.npz then), which is never read from a folder not trusted",
            f"if you have reviewed the folder, trust it with `{signatures.TRUST_COMMAND} {run_dir}`",
        )
    if data.is_file():
        received.check_archive(data)  # an .npz is a zip archive: bounded before numpy unpacks it
    return data if data.is_file() else None


def _find_model(run_dir: Path, snapshot: str, data_only: bool = False) -> tuple[Path, Path | None]:
    """The model file and the VecNormalize statistics beside it for ``snapshot``, once the folder's signatures
    verify: nothing of a folder is unpickled or instantiated unless this user's rlrun (or ``rlrun-trust``)
    signed it (:mod:`rlrun.record.signatures`). ``data_only``: no signature needed, the statistics' ``.npz``."""
    folder = run_dir / "snapshots"
    what = f"loading {run_dir}"
    if snapshot == "final" and (run_dir / "model.zip").exists():
        if not data_only:
            signatures.check_run(run_dir, ("config.yaml", "model.zip", "vecnormalize.pkl"), what)
        return run_dir / "model.zip", _statistics(run_dir, run_dir, data_only)
    if not data_only:
        signatures.check_run(run_dir, ("config.yaml",), what)
        signatures.check_snapshots(run_dir, snapshots.list_snapshots(folder), what)
    if snapshot in ("final", "latest"):
        chosen = snapshots.newest_complete(folder)
    elif snapshot == "best":
        chosen = snapshots.best(folder)
    elif snapshot.isdigit():
        chosen = folder / snapshots.snapshot_name(int(snapshot))
        if not snapshots.is_complete(chosen):
            steps = [snapshots.step_of(s) for s in snapshots.list_snapshots(folder) if snapshots.is_complete(s)]
            raise UserError(f"{run_dir} has no complete snapshot at step {snapshot}", f"choose one of: {steps}")
    else:
        raise UserError(f"--snapshot {snapshot} is not one of {CHOICES}", "e.g. --snapshot final")
    if chosen is None:
        raise UserError(
            f"{run_dir} has no model to evaluate (no model.zip and no complete snapshot)",
            "evaluate a run that finished or took a snapshot; train one with `python -m rlrun`",
        )
    if not data_only and not snapshots.listed(chosen, "vecnormalize.pkl"):  # a file its manifest lists, or none
        return chosen / "model.zip", None
    return chosen / "model.zip", _statistics(run_dir, chosen, data_only)


def _run_config(run_dir: Path) -> DictConfig:
    """The run's ``config.yaml``, upgraded if an older rlrun wrote it; refused (exit 2) when it cannot be read or
    a value in it has a type the schema does not allow (:func:`rlrun.record.fields.config_problem`)."""
    if not (run_dir / "config.yaml").is_file():
        raise UserError(f"{run_dir} is not a run folder (no config.yaml)", "give a folder under outputs/runs/")
    cfg, problem = read_config(run_dir)
    if problem is not None:
        raise UserError(f"{run_dir}: {problem}", "restore the run's config.yaml from a copy, or use another run")
    assert cfg is not None
    return cfg


def load_run(
    run_dir: str | Path,
    snapshot: str = "final",
    render_mode: str | None = None,
    seed: int | None = None,
    n_envs: int = 1,
    untrusted: str = "refuse",
) -> tuple[BaseAlgorithm, VecEnv]:
    """The run's model (``final``, ``latest``, ``best`` or a step) and an eval env built from its config.

    The env is ``n_envs`` copies with the run's wrappers and frozen VecNormalize statistics, copy i
    seeded with the run's evaluation stream (or ``seed``) + i. A folder that is not trusted (not signed under
    this user's key) is refused (exit 2), or with ``untrusted="data"`` read from data formats only
    (:mod:`rlrun.playback.received`): what ``rlrun-eval`` does with a received folder.
    """
    run_dir = Path(run_dir)
    cfg = _run_config(run_dir)
    try:
        model_path, stats = _find_model(run_dir, str(snapshot))
        data_only = False
    except signatures.NotTrusted as refusal:
        if untrusted != "data":
            raise
        cfg = _as_data(run_dir, cfg, refusal)
        model_path, stats = _find_model(run_dir, str(snapshot), data_only=True)
        data_only = True
        log.warning("%s is not trusted: read as data only (installed configs, its plain values)", run_dir)
    for path in (model_path, stats):  # a link to /dev/zero would be read for ever
        if path is not None:
            regular_files.check_regular(path)
    configure_torch(cfg)
    env = vec_envs.make_eval_env(cfg, render_mode, seed, stats, n_envs=n_envs)
    try:
        load = received.load_model_data_only if data_only else models.load_model
        return load(cfg, model_path, env), env
    except BaseException:
        env.close()
        raise


def _as_data(run_dir: Path, cfg: DictConfig, refusal: UserError) -> DictConfig:
    """The config a folder that is not trusted is evaluated with (:func:`rlrun.playback.received.rebuild`), or
    its refusal (exit 2) naming what it would run beyond data."""
    try:
        rebuilt = received.rebuild(cfg, read_json(run_dir / "run.json"))
    except received.NeedsTrust as needs:
        raise UserError(
            f"{refusal.problem}; read as data only, it would still run code of its own: {needs}",
            f"{refusal.fix}; or, for a policy class of your own, add its full class name to "
            f"{received.ALLOWED_ENV} (comma-separated)",
        ) from None
    problem = config_problem(rebuilt)
    if problem is not None:
        raise UserError(f"{run_dir}: {problem}", "restore the run's config.yaml from a copy, or use another run")
    return rebuilt


def eval_copies(run_dir: Path) -> int:
    """The run's ``eval.n_envs`` (for runs written before the key, the one copy they evaluated on)."""
    return int(_run_config(run_dir).eval.n_envs)


def success_key(run_dir: Path) -> str:
    """The run's ``env.success_key`` (``is_success`` for runs written before the key)."""
    return str(_run_config(run_dir).env.get("success_key", "is_success"))
