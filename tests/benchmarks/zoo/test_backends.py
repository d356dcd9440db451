"""``algo.backend=jax`` beside the Zoo (benchmarks/zoo/backends.py): both sides train the Zoo's hyperparameters,
the rows' ratios, goals, intervals and memory come out of the kept runs, and an invocation continues the kept ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.common import ensure_zoo
from benchmarks.zoo import backends, pairs
from rlrun.table.stats import iqm
from tests.benchmarks.zoo.helpers import zoo_hyperparams
from tests.rlrun.helpers import compose_config


@pytest.mark.parametrize("name", list(backends.PAIRS))
def test_each_pair_trains_a_zoo_entry_on_jax_at_the_zoos_hyperparameters(name: str) -> None:
    pair, steps = backends.PAIRS[name]
    entry = zoo_hyperparams(pair.zoo_algo)[pair.zoo_env]
    assert int(float(entry["n_timesteps"])) == pair.steps and steps <= pair.steps
    cfg = compose_config(*pair.rlrun(), "algo.backend=jax")
    assert cfg.algo.backend == "jax" and cfg.total_timesteps == pair.steps
    for key in ("learning_rate", "learning_starts", "batch_size", "buffer_size", "train_freq", "gradient_steps"):
        if key in entry:
            assert cfg.algo[key] == entry[key], (name, key)


def test_the_zoo_side_runs_one_thread_and_one_final_evaluation_and_rlrun_runs_jax(tmp_path: Path) -> None:
    zoo = backends.commands("pendulum_tqc", "zoo 1 thread", 20_000, 3, tmp_path)
    assert zoo[zoo.index("--algo") + 1] == "tqc" and zoo[zoo.index("--env") + 1] == "Pendulum-v1"
    assert zoo[zoo.index("-n") + 1] == "20000" and zoo[zoo.index("--seed") + 1] == "3"
    assert zoo[zoo.index("--num-threads") + 1] == "1"
    assert zoo[zoo.index("--eval-freq") + 1] == "20000" and zoo[zoo.index("--eval-episodes") + 1] == "5"
    rlrun = backends.commands("halfcheetah_sac", "rlrun jax", 20_000, 3, tmp_path)
    assert {"env=halfcheetah", "algo=sac", "algo.backend=jax", "total_timesteps=20000", "seed=3"} <= set(rlrun)
    assert "eval.every=20000" in rlrun  # evaluated once at the end, as the Zoo side is
    assert not any(o.startswith("eval.") for o in backends.commands("pendulum_sac", "rlrun jax", 20_000, 3, tmp_path))


def test_final_returns_come_from_rlruns_record_and_the_zoos_last_evaluation(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"final": {"mean_return": -150.5}, "wall_s": 90.0}))
    assert backends.final_return("rlrun jax", tmp_path) == -150.5
    assert backends.training_s("rlrun jax", tmp_path) == 90.0
    zoo = tmp_path / "tqc" / "Pendulum-v1_1"
    zoo.mkdir(parents=True)
    np.savez(zoo / "evaluations.npz", timesteps=[10, 20], results=[[-900.0, -1000.0], [-140.0, -160.0]])
    assert backends.final_return("zoo 1 thread", tmp_path) == -150.0  # the last evaluation only
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuntimeError, match="no evaluations.npz"):
        backends.final_return("zoo 1 thread", tmp_path / "empty")


def _runs(walls: list[float], training: float | None, peak: float, returns: list[float]) -> dict[str, dict]:
    return {
        str(seed): {
            "wall": wall,
            "cpu": wall,
            "peak": peak,
            "return": ret,
            "training": training,
            "date": "2026-11-27",
        }
        for seed, (wall, ret) in enumerate(zip(walls, returns, strict=True))
    }


def _kept(zoo_walls: list[float], jax_walls: list[float], steps: int = 20_000) -> dict:
    zoo = _runs(zoo_walls, None, 360.0, [-150.0, -160.0, -140.0, -155.0])
    jax = _runs(jax_walls, 80.0, 850.0, [-145.0, -150.0, -170.0, -150.0])
    return {"steps": steps, "machine": "m", "sides": {"zoo 1 thread": zoo, "rlrun jax": jax}}


def test_a_row_is_the_medians_ratio_against_its_goal_with_memory_and_both_sides_returns() -> None:
    row = backends.rows({"pendulum_sac": _kept([180.0, 190.0, 200.0, 210.0], [90.0, 95.0, 100.0, 105.0])})[0]
    # medians: the Zoo 195 s, jax 97.5 s: exactly the goal
    assert row[:6] == ["`pendulum_sac`", "20,000", "4", "195.0", "97.5", "0.500 <= 0.5: met"]
    assert row[7] == "training 0.41 of the Zoo's run; the rest 17.5 s"  # 80 of 195 s; 97.5 - 80
    assert row[8:10] == ["360 / 850", "68 / 28"]  # 24 GiB over each peak
    scores = [-150.0, -160.0, -140.0, -155.0]
    assert row[10].startswith(f"{iqm(np.asarray(scores)):.1f} [") and row[10].endswith("]")
    slower = backends.rows({"pendulum_sac": _kept([100.0] * 4, [60.0] * 4)})[0]
    assert slower[5] == "0.600 <= 0.5: NOT met"


def test_a_fraction_of_the_zoos_budget_is_shown_and_a_pair_without_both_sides_has_no_row() -> None:
    row = backends.rows({"halfcheetah_sac": _kept([100.0] * 4, [60.0] * 4)})[0]
    assert row[1] == "20,000 of 1,000,000"
    one_side = _kept([100.0] * 4, [60.0] * 4)
    one_side["sides"].pop("rlrun jax")
    assert backends.rows({"pendulum_sac": one_side}) == []


def test_kept_runs_are_skipped_and_a_pair_measured_at_other_steps_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "jax.json"
    kept = backends.Kept(path, measured_on="machine A")
    kept.add("cartpole_dqn", 50_000, "rlrun jax", 0, {"wall": 1.0})
    again = backends.Kept(path)  # a later invocation
    assert again.has("cartpole_dqn", 50_000, "rlrun jax", 0)
    assert not again.has("cartpole_dqn", 50_000, "zoo 1 thread", 0) and not again.has(
        "cartpole_dqn", 50_000, "rlrun jax", 1
    )
    assert not again.has("cartpole_dqn", 20_000, "rlrun jax", 0)
    assert again.runs["cartpole_dqn"]["machine"] == "machine A"
    again.add("cartpole_dqn", 20_000, "rlrun jax", 1, {"wall": 2.0})
    assert json.loads(path.read_text())["cartpole_dqn"]["sides"] == {"rlrun jax": {"1": {"wall": 2.0}}}


def test_the_user_level_figure_states_its_goal_and_the_sweep_that_made_it() -> None:
    figure = {"seeds": 10, "rlrun_pairs": list(backends.USER_LEVEL_JAX), "rlrun_wall": 200.0, "zoo_wall": 800.0}
    figure["rlrun_pair_s"] = {"cartpole_ppo": 100.0, "cartpole_dqn_jax": 150.0, "lunarlander_a2c": 150.0}
    figure["zoo_pair_s"] = {"cartpole_ppo": 200.0, "cartpole_dqn": 350.0, "lunarlander_a2c": 250.0}
    lines = backends.user_level_lines({**figure, "zoo_cpu": 1500.0, "date": "2026-11-27"})
    assert "+benchmark/zoo_pair=cartpole_ppo,cartpole_dqn_jax,lunarlander_a2c" in lines[1]
    assert lines[-2] == "Wall-time ratio rlrun / Zoo: **0.250** <= 0.25: met."
    assert "`cartpole_dqn_jax` rlrun 150 s, the Zoo 350 s" in lines[-1]
    lines = backends.user_level_lines({**figure, "rlrun_wall": 300.0, "zoo_cpu": 1500.0, "date": "2026-11-27"})
    assert lines[-2] == "Wall-time ratio rlrun / Zoo: **0.375** <= 0.25: NOT met."


def test_a_user_level_sweeps_seconds_add_up_per_pair(tmp_path: Path) -> None:
    for job, (pair, wall) in enumerate([("cartpole_ppo", 10.0), ("cartpole_dqn_jax", 20.5), ("cartpole_ppo", 12.0)]):
        (tmp_path / str(job)).mkdir()
        record = {"overrides": [f"+benchmark/zoo_pair={pair}", f"seed={job}"], "wall_s": wall}
        (tmp_path / str(job) / "run.json").write_text(json.dumps(record))
    assert pairs.job_seconds(tmp_path) == {"cartpole_ppo": 22.0, "cartpole_dqn_jax": 20.5}


def test_the_user_level_sweep_runs_cartpole_dqn_on_jax_and_the_other_pairs_as_the_zoo_section_does() -> None:
    assert [p.removesuffix("_jax") for p in backends.USER_LEVEL_JAX] == list(pairs.USER_LEVEL)
    jax = compose_config("+benchmark/zoo_pair=cartpole_dqn_jax")
    torch = compose_config("+benchmark/zoo_pair=cartpole_dqn")
    assert jax.algo.backend == "jax" and torch.algo.backend == "torch"
    jax.algo.backend = "torch"
    assert jax == torch  # nothing else differs


@pytest.mark.slow
def test_a_quick_measurement_runs_both_sides_and_reads_their_returns(tmp_path: Path) -> None:
    ensure_zoo()  # the Zoo's virtualenv, made as the benchmark makes it (minutes the first time)
    kept = backends.Kept(tmp_path / "jax.json")
    backends.measure(["cartpole_dqn"], seeds=1, jobs=2, work=tmp_path, kept=kept, quick=True)
    logs = sorted(p.name for p in (tmp_path / "logs").glob("*.log"))
    assert logs == ["cartpole_dqn-rlrun_jax-0.log", "cartpole_dqn-zoo_1_thread-0.log"]
    assert kept.runs == {}  # a quick measurement keeps nothing


def test_the_section_names_the_invocation_of_each_row_with_its_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "versions", lambda python=None, packages=(): "versions")  # no Zoo venv needed
    kept = {"pendulum_sac": _kept([100.0] * 4, [60.0] * 4), "cartpole_dqn": _kept([100.0] * 4, [60.0] * 4, 50_000)}
    kept["cartpole_dqn"]["sides"]["zoo 1 thread"].pop("3")  # a seed measured on one side only
    text = backends.section(kept, None)
    assert "`python -m benchmarks.zoo.backends --pairs pendulum_sac --seeds 4`" in text
    assert "`python -m benchmarks.zoo.backends --pairs cartpole_dqn --seeds 3`" in text
    assert "| `cartpole_dqn` | 50,000 | 3 |" in text and "Machine: m." in text
    assert "Goal: jax's wall time <= 0.5 of the Zoo's at one thread" in text
