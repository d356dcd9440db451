"""A budget chosen on the command line brings along the keys a preset ties to its own budget.

``rlrun env=halfcheetah algo=sac total_timesteps=3000`` would otherwise keep the preset's ``learning_starts`` of
10,000 (refused: SAC would never update), its 1M-transition buffer and its evaluation cadence. When
``total_timesteps`` is set on the command line, each key of :data:`BUDGET_BOUND` that the command line does not
set and that is larger than its limit for that budget is lowered to the value the rule gives, and each change is
one line of the run's start banner. Without ``total_timesteps`` on the command line nothing changes, so a preset
at its own budget (and its ``config_hash``) stays exactly as written.

The evaluation defaults follow the budget too (``conf/config.yaml`` resolves them with :func:`eval_every` and
:func:`final_episodes`), so that a default run spends a few per cent of its time evaluating.

The run's config is the composed config with these values merged in (a new config: the composed one is not
written to); it is what ``config.yaml`` records and ``config_hash`` covers. A sweep plans each job with the same
function, so a job's planned hash is the one its run records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from rlrun.config.keys import override_key


@dataclass(frozen=True)
class BudgetBound:
    """A key tied to the budget: above ``limit(total)`` it becomes ``value(total)``; ``rule`` says so in words."""

    key: str
    limit: Callable[[int], int]
    value: Callable[[int], int]
    rule: str


def _half(total: int) -> int:
    return total // 2


def _whole(total: int) -> int:
    return total


def eval_every(total: int) -> int:
    """The default ``eval.every``: a tenth of the budget (ten periodic evaluations)."""
    return max(total // 10, 1)


def final_episodes(total: int) -> int:
    """The default ``eval.final_episodes``: 5 per 100k steps of budget, at least 5 and at most 50 (a multiple of the
    default ``eval.n_envs``, 5, so no copy idles)."""
    return 5 * min(max(total // 100_000, 1), 10)


# The keys presets tie to their budget (docs/configs.md lists them). Half the budget for learning_starts is above
# every preset's own share (at most half: pendulum_td3), so a preset at its own budget never changes.
BUDGET_BOUND = (
    BudgetBound("algo.learning_starts", _half, _half, "at most half the budget acts at random"),
    BudgetBound("algo.buffer_size", _whole, _whole, "a buffer larger than the budget never fills"),
    BudgetBound("eval.every", _whole, eval_every, "beyond the budget no periodic evaluation happens; a tenth of it"),
)


def fit_to_budget(cfg: DictConfig, overrides: Iterable[str]) -> tuple[DictConfig, list[str]]:
    """The run's config for the command line's ``overrides``, and one line per key the budget changed.

    Returns ``cfg`` itself when nothing changes.
    """
    given = {override_key(str(override)) for override in overrides}
    if "total_timesteps" not in given or OmegaConf.select(cfg, "total_timesteps", default=None) is None:
        return cfg, []
    total = int(cfg.total_timesteps)
    if total < 1:  # refused by the range checks: scaling to it would only add problems of rlrun's own making
        return cfg, []
    changes: dict[str, int] = {}
    lines = []
    for bound in BUDGET_BOUND:
        value = OmegaConf.select(cfg, bound.key, default=None)
        if bound.key in given or isinstance(value, bool) or not isinstance(value, int):
            continue
        if value > bound.limit(total):
            changes[bound.key] = bound.value(total)
            lines.append(
                f"total_timesteps={total} scaled {bound.key}: {value} -> {changes[bound.key]} ({bound.rule}; "
                f"set {bound.key}= on the command line to keep another value)"
            )
    if not changes:
        return cfg, []
    fitted = OmegaConf.merge(cfg, OmegaConf.from_dotlist([f"{key}={value}" for key, value in changes.items()]))
    assert isinstance(fitted, DictConfig)
    return fitted, lines
