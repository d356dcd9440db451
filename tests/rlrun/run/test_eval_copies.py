"""Evaluation makes no more env copies than the episodes asked for (eval.n_envs capped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlrun.make import vec_envs
from rlrun.playback import video
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
    assert video.copies(None, render_mode=None, episodes=1, run_dir=tmp_path) == 1
