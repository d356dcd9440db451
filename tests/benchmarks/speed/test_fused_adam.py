"""The fused Adam benchmark (benchmarks/speed/fused_adam.py): the two sides of a seed next to each other, the first one
alternating; each run composes the preset with ``fused_adam`` set; the verdict on the default follows the scores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.speed import fused_adam
from rlrun.config.keys import training_overrides
from tests.rlrun.helpers import compose_config

ROOT = Path(__file__).resolve().parents[3]


def test_the_sides_of_a_seed_run_together_and_the_first_alternates() -> None:
    jobs = fused_adam.jobs_in_order(["gridworld_ppo", "pendulum_sac"], [0, 1, 2], None)
    assert len(jobs) == 12
    pairs = [jobs[i : i + 2] for i in range(0, len(jobs), 2)]
    assert all(a.preset == b.preset and a.seed == b.seed and a.fused != b.fused for a, b in pairs)
    assert [a.fused for a, _ in pairs] == [False, True, False, False, True, False]


@pytest.mark.parametrize("fused", [False, True])
def test_a_job_trains_the_preset_with_fused_adam_as_asked(tmp_path: Path, fused: bool) -> None:
    command = fused_adam.Job("pendulum_sac", 3, fused, None).command(tmp_path)
    assert command[0] == "rlrun" and f"hydra.run.dir={tmp_path}/pendulum_sac/" in " ".join(command)
    cfg = compose_config(*training_overrides(command[1:]))
    assert cfg.fused_adam is fused and cfg.torch_threads == 1
    assert cfg.total_timesteps == 10_000 and cfg.algo.policy_kwargs.net_arch == [64, 64]  # the preset's


def _finished(out: Path, preset: str, fused: bool, seed: int, score: float, metric: str) -> None:
    job = fused_adam.Job(preset, seed, fused, None)
    job.folder(out).mkdir(parents=True)
    figures = {"wall_s": 10.0 - fused, "cpu_s": 8.0 - fused, "final": {metric: score}, "command": "rlrun"}
    (job.folder(out) / "fused_adam.json").write_text(json.dumps(figures))


def test_the_section_states_the_ratios_scores_and_which_presets_fall_short(tmp_path: Path) -> None:
    seeds = [0, 1]
    for seed in seeds:
        for fused in (False, True):
            _finished(tmp_path, "cartpole_ppo", fused, seed, 460.0 if seed and not fused else 500.0, "mean_return")
            _finished(tmp_path, "gridworld_ppo", fused, seed, 0.8 if fused and seed else 1.0, "success_rate")
    presets = ["cartpole_ppo", "gridworld_ppo", "pendulum_sac"]
    body = fused_adam.section(presets, seeds, tmp_path, None, "python -m benchmarks.speed.fused_adam")
    rows = {line.split(" | ")[0]: line.split(" | ") for line in body.splitlines() if line.startswith("| `")}
    assert rows["| `cartpole_ppo`"][4] == "0.900" and rows["| `cartpole_ppo`"][7] == "0.875"  # 9/10, 7/8
    assert rows["| `cartpole_ppo`"][-1] == "2/2 |" and rows["| `gridworld_ppo`"][-1] == "1/2 |"
    assert rows["| `gridworld_ppo`"][9] == "1.00 / 0.80"
    assert rows["| `pendulum_sac`"][-1] == "not run |"
    assert "falls short of the target on some seed for `gridworld_ppo`: the default stays" in body
    assert "Not finished: `pendulum_sac`." in body
    assert "Without fused Adam, some seed falls short for `cartpole_ppo`." in body


def test_the_section_says_so_when_every_preset_meets_its_target(tmp_path: Path) -> None:
    for fused in (False, True):
        _finished(tmp_path, "cartpole_ppo", fused, 0, 480.0, "mean_return")
    body = fused_adam.section(["cartpole_ppo"], [0], tmp_path, None, "python -m benchmarks.speed.fused_adam")
    assert "Every verified preset meets its target on every seed with fused Adam" in body
    assert "The default is `fused_adam: auto` (conf/config.yaml)" in body


def test_the_section_names_the_machine_as_it_was_when_the_runs_started(tmp_path: Path) -> None:
    _finished(tmp_path, "cartpole_ppo", False, 0, 480.0, "mean_return")
    (tmp_path / fused_adam.MACHINE).write_text("A CPU, 2 cores (load 0.0, 0.0, 0.0 at the start), Linux\n")
    body = fused_adam.section(["cartpole_ppo"], [0], tmp_path, None, "python -m benchmarks.speed.fused_adam")
    assert "Machine: A CPU, 2 cores (load 0.0, 0.0, 0.0 at the start), Linux." in body


def test_a_default_still_off_is_said_to_wait_for_the_slow_tests() -> None:
    assert "until then it stays `fused_adam: false`" in fused_adam._default_follows("false")
    assert fused_adam.configured_default() == "auto"


@pytest.mark.slow
def test_the_quick_benchmark_runs_both_sides_and_writes_its_section(tmp_path: Path) -> None:
    markdown = tmp_path / "BENCHMARKS.md"
    command = [sys.executable, "-m", "benchmarks.speed.fused_adam", "--quick", "--presets", "gridworld_ppo"]
    command += ["--out", str(tmp_path / "runs"), "--benchmarks-md", str(markdown)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    text = markdown.read_text()
    assert "<!-- rlrun:begin fused_adam -->" in text and "| `gridworld_ppo` |" in text
    machine_line = (tmp_path / "runs" / "quick" / fused_adam.MACHINE).read_text().strip()
    assert f"Machine: {machine_line}." in text  # as it was when the runs started
    for side in ("plain", "fused"):
        assert (tmp_path / "runs" / "quick" / "gridworld_ppo" / side / "seed-1" / "run.json").exists()
