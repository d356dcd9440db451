"""rlrun-table's statistics (rlrun/table/stats.py) against scipy called directly: IQM, intervals, steps to threshold,
probability of improvement."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from rlrun.cli.table import main
from rlrun.config.errors import UserError
from rlrun.table.outputs import COLUMNS
from rlrun.table.write import group_names, write_tables
from tests.rlrun.table.helpers import make_run, read_json, read_rows


def scipy_iqm_interval(scores: Sequence[float]) -> tuple[float, float]:
    interval = stats.bootstrap(
        (np.asarray(scores),),
        lambda x, axis: stats.trim_mean(x, 0.25, axis=axis),
        method="percentile",
        n_resamples=10000,
        rng=np.random.default_rng(0),
    ).confidence_interval
    return float(interval.low), float(interval.high)


SCORES = [100.0, 480.0, 490.0, 300.0, 500.0, 20.0]


def test_statistics_are_scipys(tmp_path: Path) -> None:
    for seed, score in enumerate(SCORES):
        make_run(tmp_path / f"cartpole-ppo/seed-{seed}", seed, score)
    path = write_tables([tmp_path], tmp_path)

    assert path == tmp_path / "table.md"
    row = read_json(tmp_path)["rows"][0]
    assert list(row) == list(COLUMNS)
    assert row["return_mean"] == pytest.approx(np.mean(SCORES), abs=0)
    assert row["return_std"] == pytest.approx(np.std(SCORES), abs=0)
    assert row["return_iqm"] == pytest.approx(stats.trim_mean(SCORES, 0.25), abs=0)
    assert (row["return_iqm_low"], row["return_iqm_high"]) == scipy_iqm_interval(SCORES)
    assert row["return_iqm_low"] < row["return_iqm"] < row["return_iqm_high"]
    assert row["seeds_completed"] == row["seeds_planned"] == 6
    assert row["success_iqm"] is None and row["wall_s"] == 12.5 and row["fps"] == 350.0
    csv_row = read_rows(tmp_path)["cartpole-ppo"]
    assert float(csv_row["return_iqm_low"]) == row["return_iqm_low"] and csv_row["success_mean"] == ""


def test_one_run_has_no_interval_and_equal_scores_give_the_value(tmp_path: Path) -> None:
    make_run(tmp_path / "cartpole-ppo/seed-0", 0, 42.0)
    for seed in range(3):
        make_run(
            tmp_path / f"gridworld-ppo/seed-{seed}", seed, 1.0, success=1.0, env=("gridworld", "rlrun/GridWorld-v0")
        )
    write_tables([tmp_path], tmp_path)

    rows = read_rows(tmp_path)
    assert rows["cartpole-ppo"]["return_iqm"] == "42.0" and rows["cartpole-ppo"]["return_iqm_low"] == ""
    assert [rows["gridworld-ppo"][f"success_iqm{s}"] for s in ("", "_low", "_high")] == ["1.0", "1.0", "1.0"]
    markdown = (tmp_path / "table.md").read_text()
    assert "| `cartpole-ppo` | 1/1 | 42.00 ± 0.00 | 42.00 – |" in markdown
    assert "1.00 [1.00, 1.00]" in markdown


def test_steps_to_threshold(tmp_path: Path) -> None:
    successes = [[0.5, 0.9, 1.0], [0.2, 0.4, 0.95], [0.0, 0.1, 0.2], [1.0, 1.0, 1.0]]  # reach at 2000, 3000, -, 1000
    for seed, values in enumerate(successes):
        curve = [(1000 * (i + 1), 0.0, v) for i, v in enumerate(values)]
        make_run(
            tmp_path / f"g/seed-{seed}", seed, 0.0, success=values[-1], curve=curve, env=("gw", "rlrun/GridWorld-v0")
        )
    for seed, values in enumerate([[100.0, 480.0], [475.0, 500.0]]):  # CartPole-v1: 475 -> 2000, 1000
        make_run(
            tmp_path / f"c/seed-{seed}", seed, values[-1], curve=[(1000, values[0], None), (2000, values[1], None)]
        )
    pendulum = [(500, -900.0, None), (1000, -199.0, None)]
    make_run(tmp_path / "p/seed-0", 0, -199.0, curve=pendulum, env=("pendulum", "Pendulum-v1"), algo="sac")
    make_run(tmp_path / "m/seed-0", 0, 5.0, env=("mc", "MountainCarContinuous-v0"))  # declares 90: never reached
    make_run(tmp_path / "n/seed-0", 0, 5.0, env=("none", "mypkg:Nothing-v0"))  # no threshold known
    write_tables([tmp_path], tmp_path)

    rows = read_rows(tmp_path)
    assert (rows["gw-ppo"]["steps_to_threshold"], rows["gw-ppo"]["reached"]) == ("2000", "3")
    assert (rows["cartpole-ppo"]["steps_to_threshold"], rows["cartpole-ppo"]["reached"]) == ("1500", "2")
    assert (rows["pendulum-sac"]["steps_to_threshold"], rows["pendulum-sac"]["reached"]) == ("1000", "1")
    assert (rows["mc-ppo"]["steps_to_threshold"], rows["mc-ppo"]["reached"]) == ("", "0")
    assert (rows["none-ppo"]["steps_to_threshold"], rows["none-ppo"]["reached"]) == ("", "")
    runs = next(g["runs"] for g in read_json(tmp_path)["groups"] if g["group"] == "gw-ppo")
    assert [run["steps_to_threshold"] for run in runs] == [2000, 3000, None, 1000]


def _set_threshold(run_dir: Path, level: float | None) -> None:
    """Give a hand-written run's config.yaml the env.threshold key, as runs written since the key existed have."""
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    config["env"]["threshold"] = level
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))


def test_steps_to_threshold_from_the_env_config(tmp_path: Path) -> None:
    """env.threshold (conf/env/pendulum.yaml's -200, MiniGrid's 0.9) where the registration declares none; it wins
    over the registration's when set; null leaves the registration's, or no threshold; runs written before the key
    keep the levels tables used then (Pendulum-v1: -200)."""
    curve = [(500, -900.0, None), (1000, -199.0, None), (1500, -150.0, None)]
    for name, level in (("pendulum", -200.0), ("strict", -160.0), ("null", None)):
        run = make_run(tmp_path / f"{name}/seed-0", 0, -150.0, curve=curve, env=(name, "Pendulum-v1"), algo="sac")
        _set_threshold(run, level)
    grid = [(1000, 0.5, None), (2000, 0.93, None)]
    _set_threshold(make_run(tmp_path / "mg/seed-0", 0, 0.93, curve=grid, env=("mg", "minigrid:MiniGrid-X-v0")), 0.9)
    cartpole = [(1000, 150.0, None), (2000, 480.0, None)]  # registration: 475
    _set_threshold(make_run(tmp_path / "cp/seed-0", 0, 480.0, curve=cartpole, env=("cp", "CartPole-v1")), 100.0)
    write_tables([tmp_path], tmp_path)

    rows = read_rows(tmp_path)
    assert rows["pendulum-sac"]["steps_to_threshold"] == "1000"
    assert rows["strict-sac"]["steps_to_threshold"] == "1500"
    assert (rows["null-sac"]["steps_to_threshold"], rows["null-sac"]["reached"]) == ("", "")  # Pendulum declares none
    assert rows["mg-ppo"]["steps_to_threshold"] == "2000"
    assert rows["cp-ppo"]["steps_to_threshold"] == "1000"
    levels = {g["group"]: g["threshold"] for g in read_json(tmp_path)["groups"]}
    assert levels["mg-ppo"] == {"metric": "mean_return", "value": 0.9} and levels["null-sac"] is None


def test_probability_of_improvement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = [3.0, 5.0, 5.0, 9.0], [1.0, 5.0, 7.0]
    for seed, score in enumerate(a):
        make_run(tmp_path / f"a/seed-{seed}", seed, score, overrides=["algo.n_steps=64"], config_hash="a" * 64)
    for seed, score in enumerate(b):
        make_run(tmp_path / f"b/seed-{seed}", seed, score, overrides=["algo.n_steps=128"], config_hash="b" * 64)
    names = ("cartpole-ppo algo.n_steps=64", "cartpole-ppo algo.n_steps=128")
    assert group_names([tmp_path]) == list(names)  # rows in numeric order of the values: 64 before 128
    write_tables([tmp_path], tmp_path, compare=names)

    def improvement(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        x, y = np.moveaxis(x, axis, -1)[..., :, None], np.moveaxis(y, axis, -1)[..., None, :]
        return np.mean(x > y, axis=(-2, -1)) + 0.5 * np.mean(x == y, axis=(-2, -1))

    interval = stats.bootstrap(
        (np.array(a), np.array(b)), improvement, method="percentile", n_resamples=10000, rng=np.random.default_rng(0)
    ).confidence_interval
    compare = read_json(tmp_path)["compare"]
    # pairs: 3 beats 1; 5 beats 1, ties 5; 5 the same; 9 beats all three -> (1 + 1.5 + 1.5 + 3) / 12
    assert compare["probability"] == 7 / 12
    assert (compare["low"], compare["high"]) == pytest.approx((interval.low, interval.high), abs=1e-12)
    assert f"P(`{names[0]}` > `{names[1]}`) = 0.58" in " ".join((tmp_path / "table.md").read_text().split())

    with pytest.raises(UserError, match="no completed run with a final success"):
        write_tables([tmp_path], tmp_path / "success", metric="success", compare=names)
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path), "--compare", names[0], "cartpole-ppo"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "no group named 'cartpole-ppo'" in err and names[1] in err and "Traceback" not in err
