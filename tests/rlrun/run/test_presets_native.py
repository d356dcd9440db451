"""The tuned presets reach their targets on the native batched envs too (``env.vectorization=native``).

Same presets, thresholds and seeds as tests/rlrun/run/test_presets.py, for every preset whose env has a native
version (``pytest -m slow tests/rlrun/run/test_presets_native.py``). On PointEnv, GridWorld and PointGoal the
batched envs reproduce the gym envs step for step, so these runs train the very models the gym runs train;
RoomToy's move noise is drawn differently, so its runs are new samples of the same task.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rlrun.envs.batched import ENV_CLASSES

from benchmarks.verified_presets import PRESETS, SEEDS, TARGETS, split
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config

NATIVE_PRESETS = [p for p in PRESETS if compose_config(f"env={split(p)[0]}").env.id in ENV_CLASSES]
CASES = [(preset, seed) for preset in NATIVE_PRESETS for seed in SEEDS]


def test_every_native_env_has_presets_checked_here() -> None:
    envs_checked = {compose_config(f"env={split(p)[0]}").env.id for p in NATIVE_PRESETS}
    assert envs_checked == set(ENV_CLASSES)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "seed"), CASES, ids=[f"{preset}-native-seed{seed}" for preset, seed in CASES])
def test_preset_reaches_its_target_on_native_envs(tmp_path: Path, preset: str, seed: int) -> None:
    metric, threshold = TARGETS[preset]
    env, algo = split(preset)
    cfg = compose_config(f"env={env}", f"algo={algo}", f"seed={seed}", "progress_bar=false", "env.vectorization=native")
    final = train(cfg, tmp_path, {"env": env, "algo": algo})
    score = final[metric]
    curve = (tmp_path / "eval.csv").read_text()
    assert score is not None and score >= threshold, (
        f"{preset} (native) seed {seed}: final {metric} {score} < {threshold} after {cfg.total_timesteps} steps\n"
        f"{curve}"
    )
