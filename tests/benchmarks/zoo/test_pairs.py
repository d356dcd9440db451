"""The RL Zoo speed comparison pair by pair (benchmarks/zoo/pairs.py): the pairs train what the Zoo trains, and the
three ratios and their goals come out of the measurements."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from benchmarks.zoo import pairs
from tests.benchmarks.zoo.helpers import zoo_hyperparams

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", list(pairs.PAIRS))
def test_each_pair_trains_the_zoos_budget_of_a_zoo_entry(name: str) -> None:
    pair = pairs.PAIRS[name]
    assert (ROOT / "conf" / "benchmark" / "zoo_pair" / f"{name}.yaml").exists()  # a pair of the reproduction
    entry = zoo_hyperparams(pair.zoo_algo)[pair.zoo_env]
    assert int(float(entry["n_timesteps"])) == pair.steps
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=pair.rlrun())
        reproduction = compose("config", overrides=[f"+benchmark/zoo_pair={name}"])
    assert cfg.total_timesteps == pair.steps
    assert cfg.algo == reproduction.algo and cfg.env == reproduction.env  # what the reproduction trains


def _result(zoo_wall: float, zoo_cpu: float, zoo1_wall: float, rlrun_wall: float, rlrun_cpu: float) -> dict:
    def side(wall: float, cpu: float) -> dict[str, list[float]]:
        return {"wall": [wall, wall + 2.0], "cpu": [cpu, cpu + 2.0], "peak": [300.0, 300.0]}

    sides = {
        "zoo defaults": side(zoo_wall, zoo_cpu),
        "zoo 1 thread": side(zoo1_wall, zoo1_wall),
        "rlrun defaults": side(rlrun_wall, rlrun_cpu),
    }
    return {"steps": 1000, "reps": 2, "date": "2026-11-24", "sides": sides}


def test_ratios_are_medians_and_the_default_goal_applies_only_where_the_zoo_runs_on_one_core() -> None:
    one_core = pairs.rows({"a": _result(99.0, 99.0, 99.0, 89.0, 59.0)})[0]
    # medians: zoo 100 s wall (100 s CPU: one core), zoo at one thread 100 s, rlrun 90 s wall and 60 s CPU
    assert one_core[2] == "100.0 (1.0)"
    assert one_core[5] == "0.900 <= 1.0: met"
    assert one_core[6] == "0.900 <= 0.95: met"
    assert one_core[7] == "0.600 <= 0.7: met"
    two_cores = pairs.rows({"a": _result(49.0, 99.0, 99.0, 89.0, 79.0)})[0]
    assert two_cores[2] == "50.0 (2.0)"
    assert two_cores[5] == "1.800 "  # no goal: the Zoo's default used both cores
    assert two_cores[7] == "0.800 <= 0.7: NOT met"
    slower = pairs.rows({"a": _result(99.0, 99.0, 79.0, 89.0, 59.0)})[0]
    assert slower[6] == "1.125 <= 0.95: NOT met"
    assert slower[8] == ""  # measured before the side "rlrun at zoo eval" existed
    with_zoo_eval = _result(99.0, 99.0, 79.0, 89.0, 59.0)
    with_zoo_eval["sides"]["rlrun at zoo eval"] = {"wall": [71.0, 73.0], "cpu": [70.0, 70.0], "peak": [1.0, 1.0]}
    assert pairs.rows({"a": with_zoo_eval})[0][8] == "72.0 (0.900)"
