"""rlrun-table: statistics against scipy called directly, grouping, damaged runs, byte-identical files, a real sweep."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from omegaconf import DictConfig, OmegaConf
from scipy import stats

from rlrun.cli.table import main
from rlrun.config.errors import UserError
from rlrun.table.files import COLUMNS, write_section
from rlrun.table.runs import Damaged, read_run
from rlrun.table.write import group_names, write_tables

HEADER = "timesteps,mean_return,std_return,success_rate,wall_s\n"
Curve = Sequence[tuple[int, float, float | None]]


def make_run(
    folder: Path,
    seed: int,
    score: float,
    *,
    success: float | None = None,
    curve: Curve | None = None,
    env: tuple[str, str] = ("cartpole", "CartPole-v1"),
    algo: str = "ppo",
    config_hash: str = "a" * 64,
    overrides: Sequence[str] = (),
    status: str = "completed",
    total_timesteps: int = 1000,
    n_steps: int = 8,
    returns: Sequence[float] | None = None,
) -> Path:
    """A run folder by hand: run.json, config.yaml and eval.csv with known numbers."""
    folder.mkdir(parents=True)
    returns = [score] if returns is None else list(returns)
    final = {"mean_return": score, "std_return": float(np.std(returns)), "success_rate": success, "returns": returns}
    record = {
        "status": status,
        "env": env[0],
        "env_id": env[1],
        "algo": algo,
        "seed": seed,
        "config_hash": config_hash,
        "overrides": [f"env={env[0]}", f"algo={algo}", *overrides, f"seed={seed}"],
        "total_timesteps": total_timesteps,
        "timesteps": total_timesteps,
        "wall_s": 10.0 + seed,
        "fps": 100.0 * (seed + 1),
        "final": final if status == "completed" else None,
        "versions": {"rlrun": "0.1.0", "stable_baselines3": "2.9.0"},
        "git": "0123456789abcdef",
        "host": "testhost",
        "command": f"rlrun -m env={env[0]} algo={algo}",
    }
    (folder / "run.json").write_text(json.dumps(record))
    config = {"env": {"id": env[1]}, "algo": {"_target_": "x.PPO", "n_steps": n_steps}, "seed": seed}
    (folder / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(config)))
    rows = (
        curve if curve is not None else [(total_timesteps // 2, score / 2, success), (total_timesteps, score, success)]
    )
    text = "".join(f"{t},{r!r},0.0,{'' if s is None else repr(s)},1.0\n" for t, r, s in rows)
    (folder / "eval.csv").write_text(HEADER + text)
    return folder


def read_rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "table.csv") as f:
        return {row["group"]: row for row in csv.DictReader(f)}


def read_json(out: Path) -> dict[str, Any]:
    return json.loads((out / "table.json").read_text())


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
    assert f"P(`{names[0]}` > `{names[1]}`) = 0.58" in (tmp_path / "table.md").read_text()

    with pytest.raises(UserError, match="no completed run with a final success"):
        write_tables([tmp_path], tmp_path / "success", metric="success", compare=names)
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path), "--compare", names[0], "cartpole-ppo"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "no group named 'cartpole-ppo'" in err and names[1] in err and "Traceback" not in err


def test_two_calls_give_the_same_bytes(tmp_path: Path) -> None:
    for seed, score in enumerate([1.0, 4.0, 2.0]):
        make_run(tmp_path / f"runs/cartpole-ppo/seed-{seed}", seed, score)
        make_run(
            tmp_path / f"runs/gw-dqn/seed-{seed}",
            seed,
            score / 4,
            success=score / 4,
            env=("gw", "rlrun/GridWorld-v0"),
            algo="dqn",
        )
    files = ("table.md", "table.csv", "table.json", "curves.png")
    write_tables([tmp_path / "runs"], tmp_path / "one")
    write_tables([tmp_path / "runs"], tmp_path / "two")
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert (tmp_path / "one/curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_groups_by_hash_never_mixing_budgets_and_by_keys(tmp_path: Path) -> None:
    lr1, lr2 = "algo.learning_rate=0.1", "algo.learning_rate=0.2"
    for seed in range(2):
        make_run(tmp_path / f"s/lr1/seed-{seed}", seed, 1.0 + seed, overrides=[lr1], config_hash="1" * 64)
        make_run(tmp_path / f"s/lr2/seed-{seed}", seed, 3.0 + seed, overrides=[lr2], config_hash="2" * 64)
        long = {"overrides": [lr1, "total_timesteps=2000"], "total_timesteps": 2000, "n_steps": 16}
        make_run(tmp_path / f"s/long/seed-{seed}", seed, 9.0, config_hash="3" * 64, **long)
    write_tables([tmp_path / "s"], tmp_path)
    rows = read_rows(tmp_path)
    assert list(rows) == [  # budgets differ within cartpole-ppo: every name shows its budget
        "cartpole-ppo algo.learning_rate=0.1 total_timesteps=1000",
        "cartpole-ppo algo.learning_rate=0.2 total_timesteps=1000",
        "cartpole-ppo algo.learning_rate=0.1 total_timesteps=2000",
    ]
    assert [rows[g]["return_mean"] for g in rows] == ["1.5", "3.5", "9.0"]

    # --by merges what the hash keeps apart, but never across total_timesteps
    write_tables([tmp_path / "s"], tmp_path, by=["algo.n_steps"])
    rows = read_rows(tmp_path)
    assert list(rows) == [
        "cartpole-ppo algo.n_steps=8 total_timesteps=1000",
        "cartpole-ppo algo.n_steps=16 total_timesteps=2000",
    ]
    assert rows["cartpole-ppo algo.n_steps=8 total_timesteps=1000"]["seeds_completed"] == "4"
    assert rows["cartpole-ppo algo.n_steps=8 total_timesteps=1000"]["return_mean"] == "2.5"
    with pytest.raises(UserError, match="algo.n_stepz"):
        write_tables([tmp_path / "s"], tmp_path, by=["algo.n_stepz"])


def test_a_group_of_one_config_is_named_by_env_and_algo(tmp_path: Path) -> None:
    make_run(tmp_path / "a/seed-0", 0, 1.0, overrides=["total_timesteps=1000", "eval.every=10", "progress_bar=false"])
    make_run(tmp_path / "a/seed-1", 1, 2.0, overrides=["total_timesteps=1000"])
    make_run(tmp_path / "b/seed-0", 0, 1.0, env=("pendulum", "Pendulum-v1"), algo="sac", overrides=["+algo.gamma=0.9"])
    write_tables([tmp_path], tmp_path)
    assert list(read_rows(tmp_path)) == ["cartpole-ppo", "pendulum-sac"]


def test_damaged_runs_are_left_out_with_one_warning_each(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = [make_run(tmp_path / f"sweep/seed-{seed}", seed, 10.0 * seed) for seed in range(3)]
    truncated = make_run(tmp_path / "sweep/seed-3", 3, 99.0)
    (truncated / "run.json").write_text((truncated / "run.json").read_text()[:40])
    edited = make_run(tmp_path / "sweep/seed-4", 4, 99.0)
    (edited / "run.json").write_text((edited / "run.json").read_text().replace('"seed": 4', '"seed": "four"'))
    no_eval = make_run(tmp_path / "sweep/seed-5", 5, 99.0)
    (no_eval / "eval.csv").unlink()
    make_run(tmp_path / "sweep/seed-6", 6, 99.0, status="failed")  # counted, never averaged
    make_run(tmp_path / "sweep/seed-7", 7, 99.0, status="running")
    make_run(tmp_path / "sweep/seed-8/attempts/1", 8, 99.0, status="failed")  # a failed attempt, run again

    write_tables([tmp_path / "sweep"], tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 3
    for folder, reason in ((truncated, "cannot be read"), (edited, "'seed'"), (no_eval, "no eval.csv")):
        assert sum(str(folder) in w and reason in w for w in warnings) == 1
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"], row["return_mean"]) == ("3", "5", "10.0")
    assert all(str(g) not in " ".join(warnings) for g in good)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "eval.csv lacks the header timesteps,mean_return,std_return,success_rate,wall_s"),
        (HEADER + "64,high,0.0,,1.0\n", "eval.csv cannot be parsed (could not convert string to float: 'high')"),
        (b"\xff\xfe", "eval.csv cannot be parsed ('utf-8' codec can't decode"),
    ],
    ids=["empty", "bad-number", "not-text"],
)
def test_an_eval_csv_that_cannot_be_read_says_why(tmp_path: Path, text: str | bytes, reason: str) -> None:
    folder = make_run(tmp_path / "run", 0, 1.0)
    csv_path = folder / "eval.csv"
    csv_path.write_bytes(text) if isinstance(text, bytes) else csv_path.write_text(text)
    with pytest.raises(Damaged) as damaged:
        read_run(folder)
    assert str(damaged.value).startswith(reason)


def test_seeds_planned_come_from_sweep_json(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    for seed in range(2):
        make_run(sweep / f"cartpole-ppo/seed-{seed}", seed, 500.0)
    jobs = [{"folder": f"cartpole-ppo/seed-{k}", "overrides": [f"seed={k}"], "status": "completed"} for k in range(5)]
    jobs.append({"folder": "cartpole-a2c/seed-0", "overrides": ["algo=a2c"], "status": "not_started"})
    (sweep / "sweep.json").write_text(json.dumps({"sweep": "s", "jobs": jobs}))
    write_tables([sweep / "cartpole-ppo"], tmp_path / "out")  # a sub-folder of the sweep finds its sweep.json
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "5")


def test_folder_without_runs_and_several_folders_without_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    (empty / "nested").mkdir(parents=True)
    make_run(tmp_path / "full/seed-0", 0, 1.0)
    for argv, message in (
        ([str(empty)], f"{empty}: no runs found"),
        ([str(tmp_path / "full"), str(empty), "--out", str(tmp_path / "o")], f"{empty}: no runs found"),
        ([str(tmp_path / "full"), str(tmp_path / "full")], "--out DIR"),
        ([str(tmp_path / "missing")], "no such folder"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_command_line_prints_the_table(tmp_path: Path) -> None:
    for seed in range(2):
        make_run(tmp_path / f"runs/seed-{seed}", seed, 100.0 + seed)
    done = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.table", str(tmp_path / "runs"), "--metric", "success"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| `cartpole-ppo` | 2/2 | 100.5 ± 0.5 |" in done.stdout and "wrote table.md" in done.stdout
    assert (tmp_path / "runs/curves.png").is_file()


def test_write_section_rewrites_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section(path, "presets", "first")
    write_section(path, "speed", "other helper's")
    write_section(path, "presets", "second $1 \\1")  # no regex replacement in the body
    text = path.read_text()
    assert text.startswith("# Benchmarks\n")
    assert "<!-- rlrun:begin presets -->\nsecond $1 \\1\n<!-- rlrun:end presets -->" in text
    assert "<!-- rlrun:begin speed -->\nother helper's\n<!-- rlrun:end speed -->" in text and "first" not in text


def test_real_two_seed_sweep_matches_its_run_files(tiny_config: Callable[..., DictConfig], tmp_path: Path) -> None:
    from rlrun.run.train import train

    sweep = tmp_path / "sweep"
    for seed in range(2):
        overrides = ["env=gridworld", "algo=ppo", f"seed={seed}"]
        cfg = tiny_config(*overrides)
        cfg.seed = seed
        meta = {"env": "gridworld", "algo": "ppo", "overrides": overrides, "command": "rlrun -m seed=0,1"}
        train(cfg, sweep / f"gridworld-ppo/seed-{seed}", meta)
    write_tables([sweep], sweep)

    records = [json.loads((sweep / f"gridworld-ppo/seed-{k}/run.json").read_text()) for k in range(2)]
    returns = [r["final"]["mean_return"] for r in records]
    successes = [r["final"]["success_rate"] for r in records]
    row = read_rows(sweep)["gridworld-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "2")
    assert float(row["return_mean"]) == np.mean(returns) and float(row["return_std"]) == np.std(returns)
    assert float(row["success_iqm"]) == stats.trim_mean(successes, 0.25)
    assert float(row["wall_s"]) == np.median([r["wall_s"] for r in records])
    document = read_json(sweep)
    assert [run["return"] for run in document["groups"][0]["runs"]] == returns
    assert document["provenance"]["runs"]["commands"] == ["rlrun -m seed=0,1"]
    assert document["provenance"]["runs"]["versions"]["stable_baselines3"] == [
        records[0]["versions"]["stable_baselines3"]
    ]


def test_benchmark_config_runs_every_preset_over_ten_seeds_with_joblib() -> None:
    conf = Path(__file__).resolve().parents[3] / "conf"
    pairs = sorted(p.stem for p in (conf / "benchmark/pair").glob("*.yaml"))
    assert pairs == sorted(p.stem for p in (conf / "tuned").glob("*.yaml"))
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        hydra_cfg = compose("config", overrides=["+benchmark=presets"], return_hydra_config=True).hydra
        assert dict(hydra_cfg.sweeper.params) == {"+benchmark/pair": "glob(*)", "seed": "range(0,10)"}
        assert hydra_cfg.launcher._target_.endswith("JoblibLauncher")
        for pair in pairs:  # each pair file picks its env and algo, so the preset applies as on its own
            env, algo = pair.rsplit("_", 1)
            cfg = compose("config", overrides=["+benchmark=presets", f"+benchmark/pair={pair}"])
            assert cfg == compose("config", overrides=[f"env={env}", f"algo={algo}", "sweep=presets"]), pair


def test_benchmarks_md_gets_the_table_and_rl_zoos_figures(tmp_path: Path) -> None:
    from benchmarks.presets import write_benchmark

    sweep = tmp_path / "sweeps/presets"
    for seed in range(2):
        make_run(sweep / f"cartpole-ppo/seed-{seed}", seed, 500.0, returns=[500.0, 500.0], total_timesteps=100_000)
        returns = [-100.0 - 10 * seed, -300.0 - 10 * seed]
        make_run(
            sweep / f"pendulum-sac/seed-{seed}",
            seed,
            float(np.mean(returns)),
            returns=returns,
            env=("pendulum", "Pendulum-v1"),
            algo="sac",
            total_timesteps=20_000,
        )
    times = {"started": "2026-11-22T12:00:00+0000", "ended": "2026-11-22T13:02:00+0000"}
    (sweep / "sweep.json").write_text(json.dumps({**times, "jobs": []}))
    benchmarks_md = tmp_path / "BENCHMARKS.md"
    benchmarks_md.write_text("# Benchmarks\n\n<!-- rlrun:begin speed -->\nkept\n<!-- rlrun:end speed -->\n")

    write_benchmark(sweep, tmp_path / "benchmarks/presets", benchmarks_md)
    text = benchmarks_md.read_text()
    assert "<!-- rlrun:begin speed -->\nkept\n<!-- rlrun:end speed -->" in text
    assert "<!-- rlrun:begin presets -->" in text and "rlrun -m +benchmark=presets" in text
    assert "| `cartpole-ppo` | 100,000 steps (Zoo: 100,000) | 500 ± 0 | 500 ± 0 (2 seeds) | 500 ± 0 / 500 ± 0 |" in text
    pooled = np.array([-100.0, -300.0, -110.0, -310.0])  # every seed's final episodes together
    assert f"| -157 ± 89 | {pooled.mean():.0f} ± {pooled.std():.0f} (2 seeds) | -210 ± 100 / -200 ± 100 |" in text
    assert "1 h 02 min (sweep.json" in text and "](benchmarks/presets/curves.png)" in text
    assert (tmp_path / "benchmarks/presets/curves.png").is_file()
