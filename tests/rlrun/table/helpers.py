"""Run folders written by hand with known numbers, and the table files read back (shared by the table tests)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

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
