"""What a run does once its envs and model are built: learn with the run's callbacks (periodic evaluation, snapshots,
run.json kept live, the stop signals), evaluate the final model, save it and complete run.json; and, whatever
happens, record how the run ended (:meth:`Learning.recorded`).

:mod:`rlrun.run.training` checks and builds what a run trains with, then hands it to :class:`Learning`.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from rlrun.record.formats import write_failure
from rlrun.record.run_record import RunRecord
from rlrun.run import model_files, progress, resume_state, snapshots
from rlrun.run.evaluation import (
    EvalResult,
    EvaluationStopped,
    PeriodicEvaluation,
    evaluate,
    refuse_non_finite,
    sync_normalization,
)
from rlrun.run.heartbeat import KeepRecordCurrent
from rlrun.run.interrupts import InterruptCallback, LearningStopped, RunInterrupted, StoppableCallbacks
from rlrun.startup import gc_pause
from rlrun.track import tensorboard
from rlrun.track.session import Tracking

log = logging.getLogger("rlrun")


def _progress_bar(cfg: DictConfig, meta: dict[str, Any]) -> bool:
    setting = str(cfg.progress_bar).lower()
    if setting == "auto":
        return sys.stderr.isatty() and not meta.get("multirun", False)
    return setting == "true"


def _progress(cfg: DictConfig, meta: dict[str, Any]) -> progress.Progress:
    """What the run prints as it goes (:mod:`rlrun.run.progress`); a sweep's job, to its own log only."""
    every_s = float(OmegaConf.select(cfg, "progress_every", default=60))  # a run older than the key: 60
    bar = _progress_bar(cfg, meta)
    return progress.Progress(cfg.total_timesteps, every_s, bar, console=not meta.get("multirun", False))


class Learning:
    """One run from its built envs and started record to its end: its state (envs, record, evaluator, what it
    prints, the model once it learns) for :meth:`learn`, which learns with the run's callbacks and completes the
    run, inside :meth:`recorded`, which writes a failure or a stop into run.json."""

    def __init__(
        self,
        cfg: DictConfig,
        run_dir: Path,
        meta: dict[str, Any],
        envs: tuple[VecEnv, VecEnv],
        record: RunRecord,
        tracking: Tracking,
    ) -> None:
        gc_pause.resume()  # paused by the command line while the process started
        self.cfg, self.run_dir, self.record, self.tracking = cfg, run_dir, record, tracking
        self.train_env, self.eval_env = envs
        self.shown = _progress(cfg, meta)  # what the run prints as it goes
        self.evaluator = PeriodicEvaluation(
            self.eval_env,
            cfg.eval.every,
            cfg.eval.episodes,
            run_dir / "eval.csv",
            None if cfg.eval.deterministic else cfg.seed,  # the sampling seed
            cfg.env.get("success_key", "is_success"),  # runs made before the key have none
            budget=cfg.total_timesteps,
        )
        self.evaluator.on_result = self.shown.evaluation
        self.evaluator.on_start = self.shown.evaluation_started  # a line while it evaluates, too
        self.model: BaseAlgorithm | None = None  # once it learns: run.json's steps and seconds come from it

    @contextlib.contextmanager
    def recorded(self) -> Iterator[None]:
        """A failure or a stop inside is recorded in run.json, with the steps and seconds so far once the model
        learns; at the end the envs are closed and the tracked runs end with run.json's status."""
        try:
            yield
        except RunInterrupted:
            raise
        except KeyboardInterrupt:  # a third signal, or one outside training: resumable from the last snapshot
            self.record.finish("interrupted", **self._so_far())
            raise
        except BaseException as error:
            failure = write_failure(error, self.run_dir)  # a full disk: the file it could not write, and why
            self.record.fail(failure or error, **self._so_far())
            if failure is not None and failure is not error:
                raise failure from error
            raise
        finally:
            self.shown.close()  # a progress bar left by an error
            self.train_env.close()
            self.eval_env.close()
            self.tracking.end(self.record)

    def _so_far(self) -> dict[str, Any]:
        """run.json's steps and seconds so far: none before the model learns."""
        if self.model is None:
            return {}
        counts = RunRecord.counts(self.model.num_timesteps, self.evaluator.wall())
        return {**counts, "eval_s": _eval_s(self.evaluator)}

    def restored(self, snapshot: Path, exact: bool) -> tuple[BaseAlgorithm, list[BaseCallback]]:
        """The snapshot's model, buffer and state, the logs rewound to its step; with the callback that puts back, at
        the first rollout start, what SB3 draws anew there. Not ``exact``: the envs start new episodes."""
        model = model_files.load_snapshot_model(self.cfg, snapshot, self.train_env, exact)
        step = model.num_timesteps
        model.set_logger(self.tracking.logger(self.run_dir, resumed_from=step))  # TensorBoard's events after it purged
        state = snapshots.load_state(snapshot)
        envs_restored = resume_state.restore(state, model, self.train_env, self.eval_env, self.evaluator)
        if exact and not envs_restored:
            log.warning(
                "the envs could not be restored and were reset: the resumed run is correct but not bit-identical"
            )
        resume_state.rewind_eval_csv(self.run_dir / "eval.csv", self.evaluator.reported_until(step))
        return model, [resume_state.RestoreAtFirstRollout(state)]

    def learn(self, model: BaseAlgorithm, first: list[BaseCallback], snapshot: Path | None) -> dict[str, Any]:
        """Learn to ``total_timesteps`` from ``snapshot`` (None: from the start), with the callbacks ``first``
        before the run's own, then complete the run. A stop signal ends training at the next boundary, with a
        snapshot there and the run ``interrupted``."""
        self.model = model
        live = KeepRecordCurrent(self.record, self.evaluator.wall, self.cfg.eval.every, self.cfg.total_timesteps)
        snapshotter = self._snapshotter(model, live, snapshot)
        interrupts = InterruptCallback(snapshotter.snapshot)
        self.evaluator.stopping = lambda: interrupts.received is not None  # an evaluation ends at a stop signal
        callbacks = StoppableCallbacks([*first, self.evaluator, self.shown, live, snapshotter], interrupts)
        with interrupts.installed():  # through the final evaluation: a signal then lets the run complete
            with contextlib.suppress(LearningStopped):  # how a stop signal ends ARS, which ignores a callback's False
                remaining = self.cfg.total_timesteps - model.num_timesteps
                model.learn(remaining, callback=callbacks, reset_num_timesteps=snapshot is None)
            if (signum := interrupts.received) is not None:
                if interrupts.stop_snapshot is None:  # not stopped at a boundary (a second signal, or learn() ended)
                    snapshotter.snapshot()  # steps and seconds recorded as it is written
                self.record.finish("interrupted", eval_s=_eval_s(self.evaluator))
                raise RunInterrupted(signum, str(self.run_dir))
            snapshotter.snapshot()  # the final state, before the final evaluation: a continuation starts from it
            try:
                return self._complete(model)
            except EvaluationStopped:  # trained, not evaluated: resume= does the final evaluation
                self.record.finish("interrupted")
                raise RunInterrupted(interrupts.received or signal.SIGINT, str(self.run_dir)) from None

    def _snapshotter(
        self, model: BaseAlgorithm, live: KeepRecordCurrent, snapshot: Path | None
    ) -> snapshots.SnapshotCallback:
        """The run's snapshots (``snapshot``: the one it resumed from), each telling ``live`` its step."""
        exact = self.record.data.get("resume_mode") != "restart_episodes"  # snapshots hold the envs themselves
        self.evaluator.replayable = exact  # and an evaluation cut short, from the eval env as it found it
        return snapshots.SnapshotCallback(
            self.run_dir / "snapshots",
            self.cfg.snapshot.every,
            self.cfg.snapshot.keep,
            self.cfg.snapshot.replay_buffer,
            state=lambda: resume_state.capture(model, self.train_env, self.eval_env, self.evaluator, exact),
            score=lambda: self.evaluator.last_mean_return,  # the latest periodic evaluation's mean return
            written=live.save,
            resumed_from=snapshot,
        )

    def _complete(self, model: BaseAlgorithm) -> dict[str, Any]:
        """Training is over: the final evaluation (with the final VecNormalize statistics), the final model, and
        run.json completed with the steps and seconds of the whole run (``eval_s``: those spent evaluating). A
        stop signal ends the final evaluation with :class:`EvaluationStopped`."""
        self.record.progress(model.num_timesteps, self.evaluator.wall())
        sync_normalization(self.train_env, self.eval_env)  # the final statistics, not the last evaluation's
        final = self._final_evaluation(model)
        model_files.save_final(model, self.run_dir)
        tensorboard.log_final(model.logger, self.cfg, final.summary(), model.num_timesteps)
        counts = RunRecord.counts(model.num_timesteps, self.evaluator.wall())
        self.record.finish("completed", **counts, eval_s=_eval_s(self.evaluator), final=final.summary())
        return final.summary()

    def _final_evaluation(self, model: BaseAlgorithm) -> EvalResult:
        """``eval.final_episodes`` episodes, sampled (unless deterministic) as :class:`PeriodicEvaluation` samples."""
        cfg, evaluator = self.cfg, self.evaluator
        sample_seed = None if cfg.eval.deterministic else cfg.seed + model.num_timesteps
        self.shown.final_started(cfg.eval.final_episodes, self.eval_env.num_envs)
        started = time.perf_counter()
        success_key = cfg.env.get("success_key", "is_success")
        final = evaluate(
            model, self.eval_env, cfg.eval.final_episodes, sample_seed=sample_seed, stop=evaluator.stopping,
            success_key=success_key,
        )  # fmt: skip
        evaluator.eval_s += time.perf_counter() - started
        refuse_non_finite(final, model)
        self.shown.final_done(final, time.perf_counter() - started)
        return final


def _eval_s(evaluator: PeriodicEvaluation) -> float:
    return round(evaluator.eval_s, 3)
