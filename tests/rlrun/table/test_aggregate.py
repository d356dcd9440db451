"""Aggregates across envs (rlrun/table/aggregate.py, aggregate_files.py, aggregate_plots.py; rlrun-table
--aggregate): rliable's statistics against an independent computation, normalisation, the stratified resampling,
byte-identical files, the warnings for envs without references, and a real end-to-end on two tiny sweeps."""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml
from omegaconf import DictConfig

from rlrun.cli.table import main
from rlrun.table.aggregate import (
    N_RESAMPLES,
    estimate,
    interval,
    load_references,
    shipped_references,
    stratified_resamples,
)
from rlrun.table.write import write_tables
from tests.rlrun.table.helpers import make_run

FILES = ("aggregate.md", "aggregate.csv", "aggregate.json", "profiles.png", "aggregate.png")


# --- rliable's definitions, written out plainly (lists and loops, no rlrun code) -----------------------------


def plain_statistics(tasks: list[list[float]]) -> dict[str, float]:
    """rliable.metrics on a runs x tasks matrix: IQM of all scores pooled (the middle half after dropping a
    quarter each side), median and mean of per-task means, optimality gap = 1 - mean(min(score, 1))."""
    pooled = sorted(score for task in tasks for score in task)
    cut = int(0.25 * len(pooled))
    middle = pooled[cut : len(pooled) - cut]
    means = sorted(sum(task) / len(task) for task in tasks)
    half = len(means) // 2
    median = means[half] if len(means) % 2 else (means[half - 1] + means[half]) / 2
    return {
        "iqm": sum(middle) / len(middle),
        "median": median,
        "mean": sum(means) / len(means),
        "optimality_gap": 1.0 - sum(min(score, 1.0) for score in pooled) / len(pooled),
    }


def plain_bootstrap(tasks: list[list[float]], resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """rliable's StratifiedBootstrap, one resample at a time: each task's runs drawn with replacement from that
    task; 95% percentile interval of each statistic."""
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {}
    for _ in range(resamples):
        resampled = [[task[int(rng.integers(len(task)))] for _ in task] for task in tasks]
        for name, value in plain_statistics(resampled).items():
            values.setdefault(name, []).append(value)
    return {name: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for name, v in values.items()}


def test_statistics_of_a_tiny_set_by_hand() -> None:
    tasks = [np.array([0.0, 0.5, 1.0, 1.5]), np.array([-0.2, 0.2, 0.4, 2.0])]
    # pooled sorted: -0.2 0 0.2 0.4 0.5 1.0 1.5 2.0; IQM = mean(0.2, 0.4, 0.5, 1.0) = 0.525
    # task means 0.75 and 0.6: median = mean = 0.675
    # optimality gap: max(0, 1 - s) = 1, 0.5, 0, 0, 1.2, 0.8, 0.6, 0 -> 4.1 / 8 = 0.5125
    got = estimate(tasks)
    assert got["iqm"] == pytest.approx(0.525, abs=1e-12)
    assert got["median"] == pytest.approx(0.675, abs=1e-12)
    assert got["mean"] == pytest.approx(0.675, abs=1e-12)
    assert got["optimality_gap"] == pytest.approx(0.5125, abs=1e-12)


def test_statistics_with_unequal_runs_per_task_by_hand() -> None:
    tasks = [np.array([0.0, 0.0, 0.9]), np.array([0.6])]
    # task means 0.3 and 0.6: mean = median = 0.45 (the pooled mean, 0.375, would weigh the first task more)
    # pooled sorted 0 0 0.6 0.9: IQM = mean(0, 0.6) = 0.3; optimality gap = (1 + 1 + 0.1 + 0.4) / 4 = 0.625
    got = estimate(tasks)
    expected = {"iqm": 0.3, "median": 0.45, "mean": 0.45, "optimality_gap": 0.625}
    assert {name: float(value) for name, value in got.items()} == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(plain_statistics([list(task) for task in tasks]), abs=1e-12)


def test_statistics_and_intervals_match_an_independent_computation() -> None:
    rng = np.random.default_rng(7)
    tasks = [rng.normal(centre, 0.3, size=8) for centre in (0.2, 0.9, 1.3)]
    points = estimate(tasks)
    plain = plain_statistics([list(task) for task in tasks])
    for name, value in plain.items():
        assert float(points[name]) == pytest.approx(value, abs=1e-12), name
    boot = estimate(stratified_resamples(tasks, N_RESAMPLES, np.random.default_rng(0)))
    independent = plain_bootstrap([list(task) for task in tasks], 4000, seed=123)
    for name, (low, high) in independent.items():
        got_low, got_high = interval(boot[name])
        # two Monte Carlo estimates of the same percentiles (different generators): equal within ~0.03,
        # where the intervals are 0.3-0.5 wide
        assert got_low == pytest.approx(low, abs=0.03), name
        assert got_high == pytest.approx(high, abs=0.03), name
        assert got_low <= float(points[name]) <= got_high


def test_stratified_resamples_keep_each_task_and_its_count() -> None:
    tasks = [np.arange(3.0), 10 + np.arange(5.0), 100 + np.arange(2.0)]
    resampled = stratified_resamples(tasks, 500, np.random.default_rng(0))
    for task, drawn in zip(tasks, resampled, strict=True):
        assert drawn.shape == (500, task.size)
        assert set(np.unique(drawn)) <= set(task)  # only that task's runs
        assert set(np.unique(drawn)) == set(task)  # and, over 500 resamples, all of them
    again = stratified_resamples(tasks, 500, np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip(resampled, again, strict=True))


# --- files from run folders ------------------------------------------------------------------------------


def _references(path: Path, entries: dict) -> Path:
    path.write_text("# references for a test\n" + yaml.safe_dump(entries))
    return path


REFERENCES = {
    "CartPole-v1": {"random": 0.0, "reference": 500.0, "algos": {"ppo": {"mean": 400.0}}},
    "Acrobot-v1": {"random": -500.0, "reference": -100.0},
}


def _runs(root: Path) -> Path:
    for seed in range(4):
        make_run(root / f"cartpole-ppo/{seed}", seed, 100.0 * (seed + 1))  # 100..400
        make_run(root / f"cartpole-a2c/{seed}", seed, 50.0 * (seed + 1), algo="a2c", config_hash="b" * 64)
        make_run(root / f"acrobot-ppo/{seed}", seed, -400.0 + 100 * seed, env=("acrobot", "Acrobot-v1"))
    return root


def _rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "aggregate.csv") as f:
        return {row["group"]: row for row in csv.DictReader(f)}


def test_normalisation_uses_the_algo_figure_then_the_env_reference(tmp_path: Path) -> None:
    refs = _references(tmp_path / "refs.yaml", REFERENCES)
    write_tables([_runs(tmp_path / "runs")], tmp_path / "out", aggregate=True, references=refs)
    document = json.loads((tmp_path / "out/aggregate.json").read_text())
    tasks = {task["group"]: task for group in document["groups"] for task in group["tasks"] if group["group"] != "all"}
    assert tasks["cartpole-ppo"]["reference_from"] == "algos.ppo"  # (score - 0) / (400 - 0)
    assert [run["normalised"] for run in tasks["cartpole-ppo"]["runs"]] == [0.25, 0.5, 0.75, 1.0]
    assert tasks["cartpole-a2c"]["reference_from"] == "reference"  # no a2c figure: the env's 500
    assert [run["normalised"] for run in tasks["cartpole-a2c"]["runs"]] == [0.1, 0.2, 0.3, 0.4]
    assert [run["normalised"] for run in tasks["acrobot-ppo"]["runs"]] == [0.25, 0.5, 0.75, 1.0]  # (s+500)/400
    rows = _rows(tmp_path / "out")
    assert list(rows) == ["a2c", "ppo", "all"]
    assert (rows["ppo"]["tasks"], rows["ppo"]["runs"], rows["ppo"]["envs"]) == ("2", "8", "Acrobot-v1 CartPole-v1")
    assert float(rows["ppo"]["mean"]) == pytest.approx(0.625)
    assert float(rows["a2c"]["iqm"]) == pytest.approx(0.25)
    assert rows["all"]["tasks"] == "3"
    for name in FILES:
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_two_calls_give_the_same_bytes_pictures_included(tmp_path: Path) -> None:
    refs = _references(tmp_path / "refs.yaml", REFERENCES)
    runs = _runs(tmp_path / "runs")
    write_tables([runs], tmp_path / "one", aggregate=True, references=refs)
    write_tables([runs], tmp_path / "two", aggregate=True, references=refs)
    for name in FILES:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert (tmp_path / "one/profiles.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_env_without_reference_or_random_is_left_out_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    refs = _references(tmp_path / "refs.yaml", {**REFERENCES, "Acrobot-v1": {"random": None, "reference": -100.0}})
    runs = _runs(tmp_path / "runs")
    make_run(runs / "gw-ppo/0", 0, 1.0, env=("gw", "rlrun/GridWorld-v0"), config_hash="c" * 64)
    with caplog.at_level(logging.WARNING, logger="rlrun.table"):
        write_tables([runs], tmp_path / "out", aggregate=True, references=refs)
    warnings = [r.getMessage() for r in caplog.records if "aggregate" in r.getMessage()]
    assert len(warnings) == 2
    assert "4 run(s) of Acrobot-v1" in warnings[0] and "no random" in warnings[0] and str(refs) in warnings[0]
    assert "rlrun/GridWorld-v0" in warnings[1] and "no random or reference" in warnings[1]
    document = json.loads((tmp_path / "out/aggregate.json").read_text())
    assert [left["env_id"] for left in document["left_out"]] == ["Acrobot-v1", "rlrun/GridWorld-v0"]
    assert _rows(tmp_path / "out")["ppo"]["envs"] == "CartPole-v1"
    assert "Left out: 4 run(s) of Acrobot-v1 (no random)" in (tmp_path / "out/aggregate.md").read_text()


def test_cli_references_file_and_its_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(tmp_path / "runs")
    refs = _references(tmp_path / "refs.yaml", REFERENCES)
    main([str(runs), "--out", str(tmp_path / "out"), "--aggregate", "--references", str(refs)])
    assert "`ppo`" in capsys.readouterr().out
    assert json.loads((tmp_path / "out/aggregate.json").read_text())["references"]["file"] == "../refs.yaml"
    bad = _references(tmp_path / "bad.yaml", {"CartPole-v1": {"random": "low", "reference": 500.0}})
    nothing = _references(tmp_path / "none.yaml", {"Pendulum-v1": {"random": -1200.0, "reference": -150.0}})
    for argv, says in [
        (["--aggregate", "--references", str(bad)], "'CartPole-v1' has random: 'low'"),
        (["--aggregate", "--references", str(nothing)], "no completed run's env has both"),
        (["--references", str(refs)], "--references without --aggregate"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main([str(runs), "--out", str(tmp_path / "refused"), *argv])
        assert stop.value.code == 2
        assert says in capsys.readouterr().err
        assert not (tmp_path / "refused").exists()  # refused before anything was written


def test_the_shipped_references_cover_the_benchmark_pairs() -> None:
    references = load_references()
    assert references.name == "conf/benchmark/references.yaml" and shipped_references().is_file()
    pairs = [
        ("CartPole-v1", "ppo"),
        ("CartPole-v1", "a2c"),
        ("CartPole-v1", "dqn"),
        ("Acrobot-v1", "a2c"),
        ("MountainCar-v0", "a2c"),
        ("LunarLander-v3", "a2c"),
        ("Pendulum-v1", "sac"),
        ("gymnasium_robotics:FetchReach-v4", "tqc"),
        ("minigrid:MiniGrid-DoorKey-5x5-v0", "ppo"),
        ("rlrun/GridWorld-v0", "ppo"),  # rlrun's own envs: their presets' figures
        ("rlrun/PointGoal-v0", "her"),
        ("rlrun/PointEnv-v0", "sac"),
        ("rlrun/RoomToy-v0", "dqn"),
    ]
    for env_id, algo in pairs:
        random, reference, basis = references.lookup(env_id, algo)
        assert basis == f"algos.{algo}", env_id
        assert random is not None and reference is not None and reference > random, env_id


# --- a real end-to-end: two tiny sweeps on two envs, two seeds each ------------------------------------------


def test_real_sweeps_on_two_envs_aggregate(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlrun.run.training import train

    for env in ("cartpole", "pendulum"):
        for seed in range(2):
            overrides = [f"env={env}", "algo=ppo", f"seed={seed}"]
            cfg = tiny_config(*overrides)
            cfg.seed = seed
            meta = {"env": env, "algo": "ppo", "overrides": overrides, "command": "rlrun -m seed=0,1"}
            train(cfg, tmp_path / f"{env}/ppo/seed-{seed}", meta)
    refs = _references(
        tmp_path / "refs.yaml",
        {"CartPole-v1": {"random": 22.0, "reference": 500.0}, "Pendulum-v1": {"random": -1200.0, "reference": -150.0}},
    )
    main(
        [str(tmp_path / "cartpole"), str(tmp_path / "pendulum"), "--out", str(tmp_path / "x"), "--aggregate"]
        + ["--references", str(refs)]
    )
    assert "aggregate.png" in capsys.readouterr().out
    document = json.loads((tmp_path / "x/aggregate.json").read_text())
    (row,) = document["rows"]
    assert (row["group"], row["tasks"], row["runs"]) == ("ppo", 2, 4)
    scores = [run["normalised"] for task in document["groups"][0]["tasks"] for run in task["runs"]]
    finals = [
        json.loads((tmp_path / f"{env}/ppo/seed-{seed}/run.json").read_text())["final"]["mean_return"]
        for env in ("cartpole", "pendulum")
        for seed in range(2)
    ]
    assert scores == pytest.approx(
        [(f - 22.0) / 478.0 for f in finals[:2]] + [(f + 1200.0) / 1050.0 for f in finals[2:]]
    )
    for statistic in ("iqm", "median", "mean", "optimality_gap"):
        assert row[f"{statistic}_low"] <= row[statistic] <= row[f"{statistic}_high"], statistic
    for name in FILES:
        assert (tmp_path / "x" / name).stat().st_size > 0


def test_the_default_experiment_aggregates_with_the_shipped_references(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m rlrun`` trains GridWorld with PPO: its runs aggregate without a references file of the user's."""
    from rlrun.run.training import train

    for seed in range(2):
        cfg = tiny_config("env=gridworld", "algo=ppo", f"seed={seed}")
        cfg.seed = seed
        meta = {"env": "gridworld", "algo": "ppo", "overrides": [f"seed={seed}"], "command": "rlrun -m seed=0,1"}
        train(cfg, tmp_path / f"runs/seed-{seed}", meta)
    main([str(tmp_path / "runs"), "--aggregate"])
    document = json.loads((tmp_path / "runs/aggregate.json").read_text())
    (row,) = document["rows"]
    assert (row["group"], row["tasks"], row["runs"], document["left_out"]) == ("ppo", 1, 2, [])
    assert "`ppo`" in capsys.readouterr().out


# --- the references file and the command that writes it ----------------------------------------------------


def _tool(*argv: str) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, "tools/references.py", *argv], check=True, capture_output=True, timeout=120)


def test_the_shipped_file_is_what_its_command_writes_and_random_scores_are_rewritten(tmp_path: Path) -> None:
    import gymnasium as gym

    copy = tmp_path / "references.yaml"
    copy.write_bytes(shipped_references().read_bytes())
    _tool("--references", str(copy))  # nothing measured or read: the same file, byte for byte
    assert copy.read_bytes() == shipped_references().read_bytes()

    _tool("--references", str(copy), "--random", "CartPole-v1", "--episodes", "3")
    env, returns = gym.make("CartPole-v1"), []
    for episode in range(3):  # uniform random actions, episode i seeded i
        env.reset(seed=episode)
        env.action_space.seed(episode)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            total, done = total + float(reward), terminated or truncated
        returns.append(total)
    before, after = yaml.safe_load(shipped_references().read_text()), yaml.safe_load(copy.read_text())
    assert after["CartPole-v1"]["random"] == round(float(np.mean(returns)), 4)
    assert after["CartPole-v1"]["algos"] == before["CartPole-v1"]["algos"]
    assert {k: v for k, v in after.items() if k != "CartPole-v1"} == {
        k: v for k, v in before.items() if k != "CartPole-v1"
    }
    assert copy.read_text().startswith("# References for `rlrun-table --aggregate`")
