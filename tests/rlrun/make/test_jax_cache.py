"""JAX's compilation cache for algo.backend=jax (rlrun/make/jax_models.py): where it lives, how it is turned off,
and that a run trains the same with it cold, warm and off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlrun import load_run
from rlrun.make.jax_models import cache_folder, parameter_arrays

pytest.importorskip("sbx")

RUN = ["env=cartpole", "algo=dqn", "algo.backend=jax", "~tuned", "total_timesteps=400", "algo.learning_starts=100"]
RUN += ["eval.every=200", "eval.episodes=2", "eval.final_episodes=2", "progress_bar=false"]


def test_the_cache_folder_is_the_users_cache_unless_named_or_turned_off(tmp_path: Path) -> None:
    home = Path.home() / ".cache" / "rlrun" / "jax"
    assert cache_folder({}) == home
    assert cache_folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "rlrun" / "jax"
    assert cache_folder({"RLRUN_JAX_CACHE": str(tmp_path / "mine")}) == tmp_path / "mine"
    assert cache_folder({"RLRUN_JAX_CACHE": "0", "XDG_CACHE_HOME": str(tmp_path)}) is None


def train(run_dir: Path, cache: str) -> None:
    env = {**os.environ, "RLRUN_JAX_CACHE": cache}
    args = [sys.executable, "-m", "rlrun", *RUN, f"hydra.run.dir={run_dir}"]
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def trained(run_dir: Path) -> tuple[list[list[str]], dict[str, np.ndarray]]:
    rows = [line.split(",")[:4] for line in (run_dir / "eval.csv").read_text().splitlines()]  # all but wall_s
    model, env = load_run(run_dir)
    env.close()
    return rows, parameter_arrays(model)


def test_a_run_trains_the_same_with_the_cache_cold_warm_and_off(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for name, setting in (("cold", str(cache)), ("warm", str(cache)), ("off", "0")):
        train(tmp_path / name, setting)
        if name == "cold":
            assert any(cache.iterdir())  # the compilations were kept
    cold, warm, off = (trained(tmp_path / name) for name in ("cold", "warm", "off"))
    for rows, arrays in (warm, off):
        assert rows == cold[0]
        assert arrays.keys() == cold[1].keys()
        assert all(np.array_equal(arrays[key], cold[1][key]) for key in arrays)
