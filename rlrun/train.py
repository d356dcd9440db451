"""One training run, top to bottom: validate -> build envs -> build model -> learn -> evaluate -> save.

:func:`train` is a plain function of the composed config, the run folder and the provenance Hydra
knows (``meta``), so tests call it without Hydra's runtime.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.logger import HParam, Logger, TensorBoardOutputFormat
from stable_baselines3.common.utils import set_random_seed

from rlrun import build, validate
from rlrun.evaluation import EvalCallback, evaluate
from rlrun.record import RunRecord
from rlrun.snapshots import SnapshotCallback

log = logging.getLogger("rlrun")


def preflight(cfg: DictConfig) -> str:
    """The cheap checks of every run (ranges, algorithm arguments, env/algorithm fit); returns the policy."""
    validate.raise_if(validate.range_problems(cfg))
    algo_cls = build.algo_class(cfg)
    validate.raise_if(validate.algo_problems(cfg, algo_cls))
    probe = build.make_env(cfg)
    try:
        validate.raise_if(validate.fit_problems(cfg, probe, algo_cls, build.uses_her(cfg)))
        return build.policy_for(cfg, probe.observation_space)
    finally:
        probe.close()


def _progress_bar(cfg: DictConfig, meta: dict[str, Any]) -> bool:
    setting = str(cfg.progress_bar).lower()
    if setting == "auto":
        return sys.stderr.isatty() and not meta.get("multirun", False)
    return setting == "true"


def _hparams(cfg: DictConfig) -> dict[str, Any]:
    """The config flattened to dotted keys with values TensorBoard's HParams tab can show."""
    flat: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            key = prefix[:-1]
            flat[key] = node if isinstance(node, (bool, int, float, str)) else str(node)

    walk(OmegaConf.to_container(cfg, resolve=True), "")
    return flat


def train(cfg: DictConfig, run_dir: str | Path, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train the configured agent into ``run_dir`` and return the final evaluation (``run.json``'s ``final``)."""
    run_dir, meta = Path(run_dir), meta or {}
    torch.set_num_threads(cfg.torch_threads)
    policy = preflight(cfg)
    set_random_seed(cfg.seed)
    record = RunRecord.start(run_dir, cfg, meta, policy)
    train_env = eval_env = None
    started = time.perf_counter()
    try:
        train_env = build.make_train_env(cfg)
        eval_env = build.make_eval_env(cfg)
        model = build.make_model(cfg, train_env)
        model.set_logger(Logger(str(run_dir / "tb"), [TensorBoardOutputFormat(str(run_dir / "tb"))]))
        evaluator = EvalCallback(eval_env, cfg.eval.every, cfg.eval.episodes, run_dir / "eval.csv")
        snapshots = SnapshotCallback(
            run_dir / "snapshots", cfg.snapshot.every, cfg.snapshot.keep, cfg.snapshot.replay_buffer
        )
        model.learn(
            cfg.total_timesteps,
            callback=CallbackList([evaluator, snapshots]),
            progress_bar=_progress_bar(cfg, meta),
        )
        wall = time.perf_counter() - started
        final = evaluate(model, eval_env, cfg.eval.final_episodes)
        model.save(run_dir / "model.zip")
        if (normalizer := model.get_vec_normalize_env()) is not None:
            normalizer.save(str(run_dir / "vecnormalize.pkl"))
        _log_final(model.logger, cfg, final.summary(), model.num_timesteps)
        record.finish(
            "completed", timesteps=model.num_timesteps, wall_s=round(wall, 3),
            fps=round(model.num_timesteps / wall, 1), final=final.summary(),
        )  # fmt: skip
        return final.summary()
    except KeyboardInterrupt:
        record.finish("interrupted", wall_s=round(time.perf_counter() - started, 3))
        raise
    except BaseException as error:
        record.finish("failed", error=f"{type(error).__name__}: {error}")
        raise
    finally:
        for env in (train_env, eval_env):
            if env is not None:
                env.close()


def _log_final(logger: Logger, cfg: DictConfig, final: dict[str, Any], step: int) -> None:
    """Final scalars and the HParams summary, so TensorBoard's HParams tab compares runs."""
    metrics = {"final/mean_return": final["mean_return"]}
    if final["success_rate"] is not None:
        metrics["final/success_rate"] = final["success_rate"]
    for key, value in metrics.items():
        logger.record(key, value)
    logger.record("hparams", HParam(_hparams(cfg), metrics), exclude=("stdout", "log", "json", "csv"))
    logger.dump(step)
    logger.close()
