"""The statistics of a table, exactly as DESIGN.md's "Statistics in tables" defines them, computed by scipy.

Scores of a group are its completed runs' final evaluations. IQM = ``scipy.stats.trim_mean(scores, 0.25)``;
its 95% interval is ``scipy.stats.bootstrap`` (percentile method, 10,000 resamples, generator seeded 0), so
the same scores always give the same bounds. With fewer than 2 scores there is no interval; when every score
is the same the interval is that value (the bootstrap distribution is a single point).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from scipy import stats

from rlrun.config.keys import ABSENT
from rlrun.make import families
from rlrun.table.runs import Curve, Group, is_score

N_RESAMPLES = 10_000
CONFIDENCE = 0.95
SEED = 0
SUCCESS_THRESHOLD = 0.9  # success rate an env that reports success must reach
# The levels tables used before env configs carried env.threshold (conf/env/pendulum.yaml now sets RL Zoo's -200):
# only for runs whose config.yaml has no env.threshold, so that their tables stay as they were.
LEGACY_THRESHOLDS = {"Pendulum-v1": -200.0}

Interval = tuple[float | None, float | None]


def iqm(scores: Any, axis: int = -1) -> Any:
    """Interquartile mean as rliable defines it: ``scipy.stats.trim_mean(scores, 0.25)``, the mean after 25% of the
    scores (rounded down) are trimmed from each end, so 4 of 6 scores count, or 6 of 10."""
    return stats.trim_mean(scores, 0.25, axis=axis)


def _bootstrap(samples: tuple[np.ndarray, ...], statistic: Any, **options: Any) -> Any:
    result = stats.bootstrap(
        samples,
        statistic,
        n_resamples=N_RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(SEED),
        **options,
    )
    return result.confidence_interval


def iqm_interval(scores: Sequence[float] | np.ndarray) -> Interval:
    """95% bootstrap interval of the IQM; ``(None, None)`` with fewer than 2 scores."""
    values = np.asarray(scores, dtype=float)
    if values.size < 2:
        return None, None
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    interval = _bootstrap((values,), iqm)
    return float(interval.low), float(interval.high)


def summary(scores: Sequence[float]) -> dict[str, float | None]:
    """mean, std (numpy's, ddof 0), iqm and its interval of a group's scores; all None without scores."""
    if not scores:
        return dict.fromkeys(("mean", "std", "iqm", "iqm_low", "iqm_high"))
    values = np.asarray(scores, dtype=float)
    low, high = iqm_interval(values)
    return {
        "mean": float(np.mean(values)),
        "std": float(np.std(values)),
        "iqm": float(iqm(values)),
        "iqm_low": low,
        "iqm_high": high,
    }


def _improvement(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """P(a run of A scores higher than a run of B), ties counting half, over all pairs."""
    a = np.moveaxis(a, axis, -1)[..., :, None]
    b = np.moveaxis(b, axis, -1)[..., None, :]
    return np.mean(a > b, axis=(-2, -1)) + 0.5 * np.mean(a == b, axis=(-2, -1))


def probability_of_improvement(a: Sequence[float], b: Sequence[float]) -> dict[str, float | None]:
    """rliable's probability of improvement of A over B with its bootstrap interval over both samples."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    point = float(_improvement(x, y))
    if x.size < 2 or y.size < 2:
        return {"probability": point, "low": None, "high": None}
    if np.all(x == x[0]) and np.all(y == y[0]):
        return {"probability": point, "low": point, "high": point}
    interval = _bootstrap((x, y), _improvement, paired=False, batch=1000)
    return {"probability": point, "low": float(interval.low), "high": float(interval.high)}


def _spec_threshold(env_id: str) -> float | None:
    """The ``reward_threshold`` of the env's Gymnasium registration: rlrun's envs, an installed family's, or one
    registered already. A run folder's ``module:`` prefix is never imported: tables read data only."""
    module, _, name = env_id.rpartition(":")
    known = {"rlrun.envs", *(family.registers for family in families.FAMILIES.values() if family.registers)}
    try:
        importlib.import_module(module if module in known else "rlrun.envs")
        threshold = gym.spec(name).reward_threshold
    except (ImportError, gym.error.Error):
        return None
    return None if threshold is None else float(threshold)


def configured_level(group: Group) -> float | None:
    """The solved level the group's env config sets (``env.threshold``, the first run's that sets one), or for
    runs written before that key existed the level tables used then (:data:`LEGACY_THRESHOLDS`)."""
    values = [run.value("env.threshold") for run in group.runs]
    if all(value is ABSENT for value in values):
        return LEGACY_THRESHOLDS.get(group.env_id.rpartition(":")[2])
    levels = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return float(levels[0]) if levels else None


def threshold(env_id: str, reports_success: bool, level: float | None = None) -> dict[str, Any] | None:
    """What a run must reach: success rate >= 0.9 (envs that report success), else mean return >= ``level``
    (the env config's ``env.threshold``) or the registration's ``reward_threshold``; None if none applies."""
    if reports_success:
        return {"metric": "success_rate", "value": SUCCESS_THRESHOLD}
    value = level if level is not None else _spec_threshold(env_id)
    return None if value is None else {"metric": "mean_return", "value": value}


def steps_to_threshold(
    curve: Curve | None, target: dict[str, Any] | None, final: tuple[int, float | None] | None = None
) -> int | None:
    """Env steps of the first evaluation that reached ``target``: a periodic one (``curve``), else the final one
    (``final``: its step and score, the run's score in the table); None if none did. An evaluation that is no
    score (:func:`rlrun.table.runs.is_score`: an infinite return is a broken evaluation) reaches nothing."""
    if target is None:
        return None
    evaluations: list[tuple[int, float | None]] = []
    if curve is not None:
        values = curve.success_rate if target["metric"] == "success_rate" else curve.mean_return
        evaluations += zip(curve.timesteps, values, strict=True)
    evaluations += [final] if final is not None else []
    for steps, value in evaluations:
        if value is not None and is_score(value) and value >= target["value"]:
            return steps
    return None


def median(values: Sequence[float]) -> float | None:
    """The median, or None without values."""
    return float(np.median(values)) if len(values) else None


def curve_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """IQM over runs (axis 0) at each evaluation, with its 95% bootstrap band (None with fewer than 2 runs)."""
    centre = iqm(values, axis=0)
    if values.shape[0] < 2:
        return centre, None, None
    interval = _bootstrap((values,), iqm, axis=0)
    return centre, np.asarray(interval.low), np.asarray(interval.high)
