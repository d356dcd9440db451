"""The tuned presets (conf/tuned/<env>_<algo>.yaml) reach their targets for every one of seeds 0-4.

The learning checks are slow (``pytest -m slow tests/rlrun/run/test_presets.py``): each preset trains its full budget
once per seed. The check that every preset has a target, and every target a preset, runs in the fast suite, so a
new preset cannot go unchecked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from benchmarks.verified_presets import CONF, PRESETS, SEEDS, TARGETS, split
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config

CASES = [(preset, seed) for preset in PRESETS for seed in SEEDS]


def test_every_preset_has_a_target_and_every_target_a_preset() -> None:
    assert PRESETS, f"no presets found in {CONF / 'tuned'}"
    assert set(PRESETS) - set(TARGETS) == set(), (
        "presets without a target: add them to benchmarks/verified_presets.TARGETS"
    )
    assert set(TARGETS) - set(PRESETS) == set(), "targets without a preset file in conf/tuned"


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_names_a_real_pair_and_states_what_it_reaches(preset: str) -> None:
    env, algo = split(preset)
    assert (CONF / "env" / f"{env}.yaml").is_file() and (CONF / "algo" / f"{algo}.yaml").is_file()
    lines = (CONF / "tuned" / f"{preset}.yaml").read_text().splitlines()
    assert lines[0] == "# @package _global_"
    assert any(line.startswith("# Reaches: ") for line in lines[1:4])


WORDS = {"success_rate": "success rate", "mean_return": "mean return"}


def test_preset_files_claim_exactly_the_asserted_targets() -> None:
    """Each preset's "Reaches:" comment states the metric, threshold, seeds and budget this module asserts."""
    for preset, (metric, threshold) in TARGETS.items():
        env, algo = split(preset)
        budget = compose_config(f"env={env}", f"algo={algo}").total_timesteps
        text = (CONF / "tuned" / f"{preset}.yaml").read_text()
        assert f"# Reaches: final {WORDS[metric]} >= {threshold:g}" in text, preset
        assert f"on every one of seeds {SEEDS[0]}-{SEEDS[-1]} after {budget // 1000}k steps" in text, preset
        assert "(asserted by pytest -m slow,\n# tests/rlrun/run/test_presets.py)" in text, preset


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_applies_to_its_pair_and_tuned_turns_it_off(preset: str) -> None:
    env, algo = split(preset)
    tuned = compose_config(f"env={env}", f"algo={algo}")
    plain = compose_config(f"env={env}", f"algo={algo}", "~tuned")
    assert tuned != plain
    assert OmegaConf.merge(plain, OmegaConf.load(CONF / "tuned" / f"{preset}.yaml")) == tuned  # the file, on top
    assert plain.total_timesteps == OmegaConf.load(CONF / "config.yaml").total_timesteps
    assert compose_config(f"env={env}", f"algo={algo}", "total_timesteps=7").total_timesteps == 7  # command line wins


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "seed"), CASES, ids=[f"{preset}-seed{seed}" for preset, seed in CASES])
def test_preset_reaches_its_target(tmp_path: Path, preset: str, seed: int) -> None:
    if preset not in TARGETS:
        pytest.fail(f"preset {preset!r} has no target in TARGETS")
    metric, threshold = TARGETS[preset]
    env, algo = split(preset)
    # the target is measured on 50 final episodes, as it was set (a default run's final evaluation follows its budget)
    cfg = compose_config(f"env={env}", f"algo={algo}", f"seed={seed}", "eval.final_episodes=50", "progress_bar=false")
    final = train(cfg, tmp_path, {"env": env, "algo": algo})
    score = final[metric]
    curve = (tmp_path / "eval.csv").read_text()
    assert score is not None and score >= threshold, (
        f"{preset} seed {seed}: final {metric} {score} < {threshold} after {cfg.total_timesteps} steps\n{curve}"
    )
