"""A run's model files: the final ``model.zip`` with its VecNormalize statistics, each written under a temporary name
and renamed, and a snapshot's model, replay buffer and statistics read back for a resume.

What a snapshot holds beyond the model (RNG states, the envs, the evaluator's state) is put back by
:mod:`rlrun.run.resume_state`; the snapshots themselves are written by :mod:`rlrun.run.snapshots`.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.make import models, vec_envs
from rlrun.record import signatures
from rlrun.record.formats import remove_partial_writes, writing
from rlrun.run import snapshots

log = logging.getLogger("rlrun")


def statistics(snapshot: Path | None) -> Path | None:
    """The snapshot's VecNormalize statistics, if it has any."""
    if snapshot is None or not snapshots.listed(snapshot, "vecnormalize.pkl"):  # only what its manifest lists
        return None
    return snapshot / "vecnormalize.pkl"


def load_snapshot_model(cfg: DictConfig, snapshot: Path, train_env: VecEnv, exact: bool) -> BaseAlgorithm:
    """The snapshot's model on ``train_env``, with its replay buffer where the snapshot holds one. Not ``exact`` (the
    run's resume mode is ``restart_episodes``): the envs start new episodes, so HER's unfinished one is cut."""
    model = models.load_model(cfg, snapshot / "model.zip", train_env)
    if not isinstance(model, OffPolicyAlgorithm):
        return model
    if snapshots.listed(snapshot, snapshots.BUFFER):  # a file the signed manifest does not list is never read
        # exact: the envs continue the unfinished episode, so HER must not truncate it; else it must, as it says
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The last trajectory in the replay buffer will be truncated")
            model.load_replay_buffer(snapshot / snapshots.BUFFER, truncate_last_traj=not exact)
    else:
        log.warning("%s holds no replay buffer (snapshot.replay_buffer=none): continuing with an empty one", snapshot)
    return model


def save_final(model: BaseAlgorithm, run_dir: Path) -> None:
    """``model.zip`` (and ``vecnormalize.pkl`` and ``.npz``), each written under a temporary name and renamed;
    then the run manifest is signed again."""
    tmp = run_dir / ".model.tmp.zip"
    with writing(run_dir / "model.zip"):
        try:
            model.save(tmp)
            os.replace(tmp, run_dir / "model.zip")
            if (normalizer := model.get_vec_normalize_env()) is not None:
                vec_envs.save_statistics(
                    normalizer, run_dir / ".vecnormalize.tmp.pkl", run_dir / ".vecnormalize.tmp.npz"
                )
                os.replace(run_dir / ".vecnormalize.tmp.pkl", run_dir / "vecnormalize.pkl")
                os.replace(run_dir / ".vecnormalize.tmp.npz", run_dir / "vecnormalize.npz")  # data only (not trusted)
        except BaseException:
            remove_partial_writes(run_dir)  # their space back (a full disk): run.json can still record why
            raise
    signatures.sign_run(run_dir)  # the run manifest now covers the final model and statistics
