"""The presets benchmark (benchmarks/scores/presets.py and conf/benchmark/): every preset over ten seeds, and its
section of BENCHMARKS.md."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from tests.rlrun.table.helpers import make_run
from tools.zoo_readme import is_generated


def test_benchmark_config_runs_every_preset_over_ten_seeds_with_joblib() -> None:
    conf = Path(__file__).resolve().parents[3] / "conf"
    pairs = sorted(p.stem for p in (conf / "benchmark/pair").glob("*.yaml"))
    assert pairs == sorted(p.stem for p in (conf / "tuned").glob("*.yaml") if not is_generated(p))  # verified ones
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        hydra_cfg = compose("config", overrides=["+benchmark=presets"], return_hydra_config=True).hydra
        assert dict(hydra_cfg.sweeper.params) == {"+benchmark/pair": "glob(*)", "seed": "range(0,10)"}
        assert hydra_cfg.launcher._target_.endswith("JoblibLauncher")
        # the evaluation the published table was measured with, pinned (not the budget-relative defaults)
        measured = ["eval.episodes=10", "eval.final_episodes=50", "eval.n_envs=10"]
        for pair in pairs:  # each pair file picks its env and algo, so the preset applies as on its own
            env, algo = pair.rsplit("_", 1)
            own = OmegaConf.to_container(OmegaConf.load(conf / "benchmark/pair" / f"{pair}.yaml"))
            assert isinstance(own, dict), pair
            assert set(own) <= {"defaults", "eval"}, pair  # a pair pins no more than its evaluation's settings
            pinned = [f"eval.{key}={value}" for key, value in own.get("eval", {}).items()]
            cfg = compose("config", overrides=["+benchmark=presets", f"+benchmark/pair={pair}"])
            alone = compose("config", overrides=[f"env={env}", f"algo={algo}", "sweep=presets", *measured, *pinned])
            assert cfg == alone, pair


def test_benchmarks_md_gets_the_table_and_rl_zoos_figures(tmp_path: Path) -> None:
    from benchmarks.scores.presets import write_benchmark, write_kept

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

    write_benchmark(sweep, tmp_path / "benchmarks/results/presets", benchmarks_md)
    text = benchmarks_md.read_text()
    assert "<!-- rlrun:begin speed -->\nkept\n<!-- rlrun:end speed -->" in text
    assert "<!-- rlrun:begin presets -->" in text and "rlrun -m +benchmark=presets" in text
    assert "| `cartpole-ppo` | 100,000 steps (Zoo: 100,000) | 500 ± 0 | 500 ± 0 (2 seeds) | 500 ± 0 / 500 ± 0 |" in text
    pooled = np.array([-100.0, -300.0, -110.0, -310.0])  # every seed's final episodes together
    assert f"| -157 ± 89 | {pooled.mean():.0f} ± {pooled.std():.0f} (2 seeds) | -210 ± 100 / -200 ± 100 |" in text
    assert "1 h 02 min (sweep.json" in text and "](benchmarks/results/presets/curves.png)" in text
    assert (tmp_path / "benchmarks/results/presets/curves.png").is_file()

    # --kept: the same section again from the kept files alone (the sweep gone), rlrun-table's text as it is now
    out = tmp_path / "benchmarks/results/presets"
    facts = json.loads((out / "section.json").read_text())
    assert facts["wall_time"].startswith("1 h 02 min") and any("`pendulum-sac`" in line for line in facts["zoo"])
    (out / "table.md").write_text("an older text\n")
    again = tmp_path / "AGAIN.md"
    again.write_text(text)
    for run in sweep.rglob("run.json"):
        run.unlink()
    write_kept(out, again)
    assert again.read_text() == text
    assert "trim_mean(scores, 0.25)" in (out / "table.md").read_text()
