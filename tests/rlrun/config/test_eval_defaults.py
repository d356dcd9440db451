"""Evaluation defaults relative to the budget: a default run spends a few per cent of its time evaluating, while the
benchmarks keep the evaluation settings their published figures were measured with."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rlrun.run import evaluation, learning, training
from tests.rlrun.helpers import compose_config

BENCHMARK_PAIRS = sorted(p.stem for p in Path("conf/benchmark/zoo_pair").resolve().glob("*.yaml"))
PRESET_PAIRS = sorted(p.stem for p in Path("conf/benchmark/pair").resolve().glob("*.yaml"))


@pytest.mark.parametrize(
    ("budget", "every", "final"),
    [(1_000, 100, 5), (20_000, 2_000, 5), (250_000, 25_000, 10), (1_000_000, 100_000, 50), (10_000_000, 1_000_000, 50)],
)
def test_evaluation_defaults_follow_the_budget(budget: int, every: int, final: int) -> None:
    cfg = compose_config("env=cartpole", "algo=ppo", "~tuned", f"total_timesteps={budget}")
    assert (cfg.eval.every, cfg.eval.episodes, cfg.eval.final_episodes, cfg.eval.n_envs) == (every, 5, final, 5)


def test_evaluation_keys_set_on_the_command_line_are_kept() -> None:
    cfg = compose_config("env=cartpole", "algo=ppo", "~tuned", "eval.every=7", "eval.final_episodes=3")
    assert (cfg.eval.every, cfg.eval.final_episodes) == (7, 3)


@pytest.mark.parametrize("pair", BENCHMARK_PAIRS)
def test_zoo_benchmark_pairs_keep_the_evaluation_their_figures_were_measured_with(pair: str) -> None:
    cfg = compose_config("+benchmark=zoo", f"+benchmark/zoo_pair={pair}")
    budget = cfg.total_timesteps
    assert cfg.eval.every == budget // 10  # every tenth of the budget, as each pair's file says
    assert (cfg.eval.episodes, cfg.eval.n_envs, cfg.eval.final_episodes) == (5, 5, 50)


@pytest.mark.parametrize("pair", PRESET_PAIRS)
def test_preset_benchmark_pairs_keep_the_evaluation_their_table_was_measured_with(pair: str) -> None:
    cfg = compose_config("+benchmark=presets", f"+benchmark/pair={pair}")
    assert (cfg.eval.episodes, cfg.eval.n_envs, cfg.eval.final_episodes) == (10, 10, 50)
    if pair == "cartpole_ppo":
        assert cfg.eval.every == 5000


@pytest.mark.slow
def test_a_default_cartpole_ppo_run_spends_at_most_5_percent_of_its_time_evaluating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ratio of two measured times (run.json's ``eval_s`` where it is recorded, else the evaluations timed here)."""
    spent = []

    def timed(*args: object, **kwargs: object) -> evaluation.EvalResult:
        start = time.perf_counter()
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        spent.append(time.perf_counter() - start)
        return result

    real = evaluation.evaluate
    monkeypatch.setattr(evaluation, "evaluate", timed)  # the periodic evaluations
    monkeypatch.setattr(learning, "evaluate", timed)  # the final one
    start = time.perf_counter()
    training.train(compose_config("env=cartpole", "algo=ppo", "progress_bar=false"), tmp_path, {})
    wall = time.perf_counter() - start
    record = json.loads((tmp_path / "run.json").read_text())
    eval_s, wall_s = record.get("eval_s", sum(spent)), wall if "eval_s" not in record else record["wall_s"]
    assert len(spent) == 3  # two periodic evaluations and the final one
    assert eval_s <= 0.05 * wall_s, f"{eval_s:.2f} s of {wall_s:.2f} s evaluating"
