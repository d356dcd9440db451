"""Evaluation episodes, with the deterministic policy by default, and the periodic evaluation callback.

Evaluations run on all copies of the eval env at once (``eval.n_envs``; one batched forward pass
per step), with the episodes shared out among the copies as SB3's ``evaluate_policy`` does, so
results do not favour short episodes. Returns are the raw env's (``Monitor`` sits under the family's
wrappers and the user's), so they compare across wrapper stacks; under SB3's ``AtariWrapper`` they are whole
games' unclipped scores, though training sees clipped rewards and a lost life as an episode's end. Success is
``info[env.success_key]`` at the end of an episode (default ``is_success``: goal envs, Fetch; ``success`` for
Meta-World-style envs), else ``is_success``; an env that reports neither has no success rate, said once per
run. Periodic results go to TensorBoard (``eval/*``) and to ``eval.csv``.

``eval.deterministic=false`` samples the actions instead, as RL Zoo evaluates MiniGrid and Atari: from torch's
and numpy's generators forked and seeded for that evaluation, so an evaluation repeats exactly and leaves the
random streams training draws from as they were.

A stop signal ends a periodic evaluation unreported, and one that falls due after the signal is not started: each
is owed (:class:`OwedEvaluation`), recorded by the snapshot the run stops at and done first when it resumes, as the
run never stopped did it. The run stops at the next boundary, after more steps and maybe an update, so what the
evaluation depends on is kept as it was at its own step: the policy's parameters and the normalisation statistics
(when the stop comes), and, in the ``exact`` resume mode, the eval env itself (copied as each evaluation starts:
its episodes come from its generator, which the cut evaluation had already drawn from).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import pickle
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecEnv, unwrap_vec_normalize

from rlrun.make import episode_cap, nan
from rlrun.make.nan import NonFiniteValue
from rlrun.record import formats
from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.run import seam

log = logging.getLogger("rlrun")


class EvaluationStopped(Exception):
    """A stop signal came during an evaluation: it ends there, and its episodes are not reported."""


@dataclass
class EvalResult:
    """Per-episode returns, lengths and (when the env reports it) success; ``capped``: the episodes cut at
    :data:`rlrun.make.episode_cap.EVAL_MAX_EPISODE_STEPS` (an env without a time limit)."""

    returns: list[float]
    lengths: list[int]
    successes: list[bool] = field(default_factory=list)
    capped: int = 0

    @property
    def mean_return(self) -> float:
        return float(np.mean(self.returns))

    @property
    def std_return(self) -> float:
        return float(np.std(self.returns))

    @property
    def success_rate(self) -> float | None:
        """None when the env does not report ``info["is_success"]``."""
        return float(np.mean(self.successes)) if self.successes else None

    def summary(self) -> dict[str, Any]:
        """The ``final`` block of ``run.json``."""
        return {
            "mean_return": self.mean_return,
            "std_return": self.std_return,
            "success_rate": self.success_rate,
            "episodes": len(self.returns),
            "returns": [float(r) for r in self.returns],
            "capped": self.capped,
        }


@dataclass
class OwedEvaluation:
    """A periodic evaluation a stop signal kept from being reported: its ``step``, the policy's parameters then
    (``policy``: a copy of torch's ``state_dict``; None where there is none to copy, SBX's) and the training envs'
    normalisation statistics then (``normalization``: ``VecNormalize``'s ``obs_rms`` and ``ret_rms``; None
    without normalisation). A snapshot holds it as a dict (:meth:`saved`)."""

    step: int
    policy: dict[str, torch.Tensor] | None = None
    normalization: tuple[Any, Any] | None = None

    def saved(self) -> dict[str, Any]:
        """What a snapshot holds of it (plain data)."""
        return asdict(self)

    @classmethod
    def listed(cls, saved: Any, step: int) -> list[OwedEvaluation]:
        """The owed evaluations a snapshot of ``step`` recorded: a list of :meth:`saved` dicts, or, in snapshots
        of an older rlrun, ``True`` for one owed evaluation of that step's policy."""
        if saved is True:
            return [cls(step)]
        return [cls(**each) for each in saved or []]


def _policy_copy(model: BaseAlgorithm) -> dict[str, torch.Tensor] | None:
    """A copy of the policy's parameters (torch's ``state_dict``), or None where it holds none (SBX's policies
    keep theirs in JAX train states)."""
    state_dict = getattr(model.policy, "state_dict", None)
    parameters = state_dict() if callable(state_dict) else {}
    return {name: tensor.detach().clone() for name, tensor in parameters.items()} or None


@contextlib.contextmanager
def _policy_as(model: BaseAlgorithm, parameters: dict[str, torch.Tensor] | None) -> Iterator[None]:
    """The policy with ``parameters`` inside (None: as it is), its own put back after."""
    if parameters is None:
        yield
        return
    own = _policy_copy(model) or {}
    model.policy.load_state_dict(parameters)
    try:
        yield
    finally:
        model.policy.load_state_dict(own)


def _normalization(venv: VecEnv) -> tuple[Any, Any] | None:
    """A copy of ``venv``'s normalisation statistics, None without ``VecNormalize``."""
    normalizer = unwrap_vec_normalize(venv)
    return None if normalizer is None else (normalizer.obs_rms.copy(), normalizer.ret_rms.copy())


@contextlib.contextmanager
def _sampling(seed: int) -> Iterator[None]:
    """Seed torch's and numpy's global generators with ``seed`` inside, restore their states after."""
    numpy_state = np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        np.random.seed(seed % 2**32)
        try:
            yield
        finally:
            np.random.set_state(numpy_state)


def evaluate(
    model: BaseAlgorithm,
    env: VecEnv,
    episodes: int,
    on_step: Callable[[dict, dict], None] | None = None,
    sample_seed: int | None = None,
    stop: Callable[[], bool] | None = None,
    success_key: str = "is_success",
) -> EvalResult:
    """Run ``episodes`` episodes on all copies of ``env`` at once: with the deterministic policy, or with
    actions sampled from it under ``sample_seed`` (see the module's docstring).

    Copy i runs ``(episodes + i) // env.num_envs`` of them (SB3's ``evaluate_policy``); returns,
    lengths and successes are listed in the order the episodes end. ``on_step`` is called after
    every step of every copy still counting (SB3's ``evaluate_policy`` callback), e.g. to render. ``stop``
    (a stop signal came) is asked after every step: :class:`EvaluationStopped` ends the evaluation there.
    Success is ``info[success_key]`` (``env.success_key``) at an episode's end, else ``info["is_success"]``.
    """
    successes: list[bool] = []
    capped = 0

    def record_success(locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
        nonlocal capped
        info = locals_["info"]
        # the episodes evaluate_policy counts: with Monitor, only the real ends (info["episode"])
        counted = "episode" in info or not locals_["is_monitor_wrapped"]
        key = success_key if success_key in info else "is_success"
        if locals_["done"] and counted and key in info:
            successes.append(bool(info[key]))
        if locals_["done"] and counted and info.get(episode_cap.CAPPED):
            capped += 1
        if on_step is not None:
            on_step(locals_, globals_)
        if stop is not None and stop():
            raise EvaluationStopped

    with contextlib.nullcontext() if sample_seed is None else _sampling(sample_seed):
        returns, lengths = evaluate_policy(
            model,
            env,
            n_eval_episodes=episodes,
            deterministic=sample_seed is None,
            return_episode_rewards=True,
            callback=record_success,
            warn=False,
        )
    if capped:
        _say_capped(env)
    return EvalResult(list(map(float, returns)), list(map(int, lengths)), successes, capped)  # type: ignore[arg-type]


def summary_text(final: dict[str, Any]) -> str:
    """``mean return 0.812 ± 0.100 over 10 episodes, success rate 0.90``: an evaluation's result as the run's lines
    say it, from :meth:`EvalResult.summary` (run.json's ``final``), with :func:`capped_text` after it."""
    episodes = final["episodes"]
    text = f"mean return {final['mean_return']:.3f} ± {final['std_return']:.3f} over {episodes} episode"
    text += "" if episodes == 1 else "s"
    text += "" if final["success_rate"] is None else f", success rate {final['success_rate']:.2f}"
    return text + capped_text(final.get("capped", 0), episodes)  # a run.json before capped was counted: none


def capped_text(capped: int, episodes: int) -> str:
    """``, 2 of 10 cut at 1,000 steps`` when episodes of an evaluation were cut at the evaluation cap (an env
    without a time limit: :mod:`rlrun.make.episode_cap`); empty when none was. The evaluation lines and the final
    line end with it."""
    if not capped:
        return ""
    return f", {capped} of {episodes} cut at {episode_cap.EVAL_MAX_EPISODE_STEPS:,} steps"


def _say_capped(env: VecEnv) -> None:
    """Warn, once per process, that evaluation episodes ran to the cap without ending: where an episode really ran
    on, not wherever an env declares no time limit (most such envs end their episodes themselves)."""
    spec = env.get_attr("spec", [0])[0]
    _warn_capped(spec.id if spec is not None else type(env.unwrapped).__name__)


@functools.cache
def _warn_capped(env_id: str) -> None:
    cap = episode_cap.EVAL_MAX_EPISODE_STEPS
    log.warning(
        "warning: episodes of %s ran %d steps without ending in evaluation and were cut there (it declares no time "
        "limit): each evaluation says how many\n  fix: set env.max_episode_steps=N to the length an episode may have",
        env_id,
        cap,
    )


def refuse_non_finite(result: EvalResult, model: BaseAlgorithm) -> None:
    """During a run (periodic and final evaluations): an evaluation whose returns hold NaN or inf fails the run
    (a ``final`` of NaN would pass for a result), naming the step and what produced it: the model, when its
    parameters are no longer finite (training diverged), else the env (its rewards or observations)."""
    bad = [r for r in result.returns if not np.isfinite(r)]
    if not bad:
        nan.refuse_non_finite_parameters(model)  # finite returns from a model all NaN (constant rewards)
        return
    finite = nan.parameters_finite(model)  # None: SBX's (JAX) parameters
    if finite is False:
        source = (
            "the model produced it: its parameters hold NaN or inf (training diverged; try a lower "
            "algo.learning_rate, or env.normalize)"
        )
    else:
        source = "the env produced it: " if finite else "the env or the model produced it: "
        source += "its rewards or observations are not finite (check_nan=true stops at the first one, naming the "
        source += "step and env copy)"
    raise NonFiniteValue(
        f"evaluation at step {model.num_timesteps} returned {bad[0]} in {len(bad)} of {len(result.returns)} "
        f"episodes; {source}"
    )


def sync_normalization(train_env: VecEnv, eval_env: VecEnv) -> None:
    """Give the eval env the training envs' current VecNormalize statistics.

    Unlike SB3's ``sync_envs_normalization`` this does not need both stacks wrapped alike: the training
    envs may carry wrappers the eval env has not (``check_nan``'s ``VecCheckNan``, a batched VecEnv).
    """
    source, target = unwrap_vec_normalize(train_env), unwrap_vec_normalize(eval_env)
    if source is not None and target is not None:
        target.obs_rms = source.obs_rms.copy()
        target.ret_rms = source.ret_rms.copy()


class PeriodicEvaluation(BaseCallback):
    """Evaluate every ``every`` env steps on the eval env; log to TensorBoard and ``eval.csv``.

    ``budget``: the run's ``total_timesteps``; no periodic evaluation is due past it. Steps beyond the budget are
    a rollout that overshoots it (PPO collects ``n_steps`` per copy whatever the budget): evaluating at each of
    its steps would cost dozens of evaluations for nothing, and the final evaluation covers the end.
    ``sample_seed``: None evaluates the deterministic policy; an int samples actions, seeded with it plus
    the steps so far (a resumed run repeats the evaluations of an uninterrupted one).
    """

    def __init__(
        self,
        eval_env: VecEnv,
        every: int,
        episodes: int,
        csv_path: Path,
        sample_seed: int | None = None,
        success_key: str = "is_success",
        *,
        budget: int,
    ) -> None:
        super().__init__()
        self.budget = budget
        self.success_key = success_key
        self.no_success_said = False
        self.sample_seed = sample_seed
        self.eval_env = eval_env
        self.every = every
        self.episodes = episodes
        self.csv_path = csv_path
        self.next_eval = every
        self.best_mean_return = -np.inf
        self.last_mean_return: float | None = None
        self.wall_offset = 0.0  # wall-clock seconds of earlier sessions of a resumed run
        self.eval_s = 0.0  # seconds of wall() spent evaluating (run.json's eval_s)
        self.on_result: Callable[[int, EvalResult], None] | None = None  # told each result, e.g. to print it
        self.on_start: Callable[[int, int], None] | None = None  # told as each starts (step, episodes), e.g. to say so
        self.started = time.perf_counter()
        self.stopping: Callable[[], bool] = lambda: False  # a stop signal came (set by the run)
        self.owed: list[OwedEvaluation] = []  # kept from being reported by a stop signal: a resumed run does them first
        self.replayable = False  # exact resume mode: the eval env is copied as each evaluation starts
        self.replay_from: Any = None  # that copy: the eval env as the first owed evaluation found it

    def wall(self) -> float:
        """Seconds of training so far, across resumes."""
        return self.wall_offset + time.perf_counter() - self.started

    def _on_training_start(self) -> None:
        self.started = time.perf_counter()
        if not self.csv_path.exists():
            with formats.open_for_writing(self.csv_path) as f:
                f.write(EVAL_CSV_HEADER)
        while self.next_eval <= self.num_timesteps:  # resumed run: the next evaluation still ahead
            self.next_eval += self.every
        with contextlib.suppress(EvaluationStopped):  # a stop signal now: still owed, and the snapshot resumed
            while self.owed:  # from (where the run stops) holds them; a run stopped while evaluating does them first
                self._replay(self.owed[0])
                self.owed.pop(0)

    def _on_step(self) -> bool:
        if self.budget >= self.next_eval <= self.num_timesteps:
            while self.next_eval <= self.num_timesteps:
                self.next_eval += self.every
            self._evaluate_unless_stopped()
        return True

    def _evaluate_unless_stopped(self) -> None:
        """A stop signal ends the evaluation unreported, or keeps it from starting; it is owed (snapshots record it,
        with what it depends on) and the run stops at the next boundary."""
        if not self.owed:  # the eval env as this evaluation finds it, for a resumed run to evaluate from
            self.replay_from = self._eval_env_copy()
        try:
            if self.stopping():
                raise EvaluationStopped
            self.run_evaluation()
        except EvaluationStopped:
            policy, normalization = _policy_copy(self.model), _normalization(self.training_env)
            self.owed.append(OwedEvaluation(self.num_timesteps, policy, normalization))

    def _eval_env_copy(self) -> Any:
        """In the ``exact`` resume mode, a copy of the eval env's state (its ``DummyVecEnv``'s attributes, as a
        snapshot holds them); None otherwise, or when it does not pickle now."""
        if not self.replayable:
            return None
        try:
            return pickle.loads(pickle.dumps(seam.whole_state(self.eval_env.unwrapped)))
        except Exception:  # a snapshot then holds the eval env as the stop left it (resume_state says so)
            return None

    def saved_eval_env(self) -> Any:
        """The eval env a snapshot holds in the ``exact`` mode: as the first owed evaluation found it, if any (None:
        as it is now)."""
        return self.replay_from if self.owed else None

    def reported_until(self, step: int) -> int:
        """The last step whose evaluation ``eval.csv`` holds at a snapshot of ``step``: the step before the first
        owed evaluation, if any (a resumed run writes that one and those after it again)."""
        return min(step, self.owed[0].step - 1) if self.owed else step

    def seed_now(self) -> int | None:
        """The sampling seed of an evaluation now (None: deterministic)."""
        return self._seed_at(self.num_timesteps)

    def _seed_at(self, step: int) -> int | None:
        return None if self.sample_seed is None else self.sample_seed + step

    def run_evaluation(self) -> EvalResult:
        """Evaluate now, log the result and append it to ``eval.csv``."""
        started = time.perf_counter()
        if self.on_start is not None:
            self.on_start(self.num_timesteps, self.episodes)
        sync_normalization(self.training_env, self.eval_env)
        seed, key = self.seed_now(), self.success_key
        result = evaluate(
            self.model, self.eval_env, self.episodes, sample_seed=seed, stop=self.stopping, success_key=key
        )
        self.eval_s += time.perf_counter() - started
        return self._report(self.num_timesteps, result)

    def _replay(self, owed: OwedEvaluation) -> EvalResult:
        """An owed evaluation, as at its own step: with the policy and the normalisation statistics of that step
        (where the snapshot kept them), then logged and appended to ``eval.csv`` under that step."""
        started = time.perf_counter()
        if self.on_start is not None:
            self.on_start(owed.step, self.episodes)
        normalizer = unwrap_vec_normalize(self.eval_env)
        if owed.normalization is not None and normalizer is not None:
            normalizer.obs_rms, normalizer.ret_rms = (stats.copy() for stats in owed.normalization)
        else:
            sync_normalization(self.training_env, self.eval_env)
        with _policy_as(self.model, owed.policy):
            result = evaluate(
                self.model, self.eval_env, self.episodes, sample_seed=self._seed_at(owed.step), stop=self.stopping,
                success_key=self.success_key,
            )  # fmt: skip
        self.eval_s += time.perf_counter() - started
        return self._report(owed.step, result)

    def _report(self, step: int, result: EvalResult) -> EvalResult:
        """Log the result of the evaluation of ``step`` (TensorBoard, the run's line) and append it to
        ``eval.csv``."""
        refuse_non_finite(result, self.model)
        self.best_mean_return = max(self.best_mean_return, result.mean_return)
        self.last_mean_return = result.mean_return
        self.logger.record("eval/mean_reward", result.mean_return)
        self.logger.record("eval/mean_ep_length", float(np.mean(result.lengths)))
        if result.success_rate is not None:
            self.logger.record("eval/success_rate", result.success_rate)
        elif not self.no_success_said:
            self.no_success_said = True
            keys = " or ".join(f"info[{key!r}]" for key in dict.fromkeys((self.success_key, "is_success")))
            log.info("the env reports no success (%s): no success rate", keys)
        if result.capped:
            self.logger.record("eval/capped_episodes", result.capped)
        self.logger.dump(step)
        success = "" if result.success_rate is None else repr(result.success_rate)
        wall = self.wall()
        with formats.open_for_writing(self.csv_path, append=True) as f:
            f.write(f"{step},{result.mean_return!r},{result.std_return!r},{success},{wall:.3f},{result.capped}\n")
        if self.on_result is not None:
            self.on_result(step, result)
        return result
