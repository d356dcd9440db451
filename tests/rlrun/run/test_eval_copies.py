"""Evaluation makes no more env copies than the episodes asked for (eval.n_envs capped)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from rlrun.cli import eval as eval_cli
from rlrun.make import vec_envs
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


def test_a_run_and_rlrun_eval_make_no_more_copies_than_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    make_eval_env = vec_envs.make_eval_env

    def counted(*args: Any, **kwargs: Any) -> Any:
        env = make_eval_env(*args, **kwargs)
        made.append(env.num_envs)
        return env

    monkeypatch.setattr(vec_envs, "make_eval_env", counted)
    cfg = shrink(compose_config("env=gridworld", "algo=ppo", "eval.n_envs=10"), steps=64)  # 2 episodes each time
    train(cfg, tmp_path)
    assert made == [2]
    args = argparse.Namespace(run_dir=tmp_path, n_envs=None, episodes=1)
    assert eval_cli._copies(args, render_mode=None, episodes=args.episodes) == 1
