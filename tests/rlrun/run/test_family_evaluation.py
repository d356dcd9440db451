"""Evaluation that fits each env family (issue 21, point 7): success rate from ``info["is_success"]`` on the Fetch
tasks, and under SB3's Atari preprocessing the raw game score, not the clipped training reward."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from omegaconf import open_dict

from rlrun.make.vec_envs import make_eval_env
from rlrun.record.fields import parse_eval_csv
from rlrun.run.evaluation import evaluate
from rlrun.run.training import train
from rlrun.table.write import write_tables
from tests.rlrun.helpers import compose_config, shrink
from tests.rlrun.table.helpers import read_rows


def test_fetch_reports_success_in_eval_csv_run_json_and_tables(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=fetchreach", "algo=her", "~tuned"), steps=200)
    final = train(cfg, tmp_path / "run", {"env": "fetchreach", "algo": "her"})
    assert final["success_rate"] is not None and 0.0 <= final["success_rate"] <= 1.0
    rows = list(parse_eval_csv((tmp_path / "run/eval.csv").read_text()))
    assert [row.timesteps for row in rows] == [100, 200]
    assert all(row.success_rate is not None for row in rows)  # the column is filled
    write_tables([tmp_path / "run"], tmp_path / "table")
    row = read_rows(tmp_path / "table")["fetchreach-her"]
    assert row["success_mean"] == repr(final["success_rate"]) and row["success_iqm"] != ""


class RecordGameScores(gym.Wrapper):
    """Sums each game's rewards where it sits (under SB3's AtariWrapper: the raw game's), and the clipped sum."""

    games: ClassVar[list[tuple[float, float]]] = []  # (score, clipped score) of each finished game

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.score, self.clipped = 0.0, 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.score += float(reward)
        self.clipped += float(np.sign(reward))
        if terminated or truncated:
            RecordGameScores.games.append((self.score, self.clipped))
        return obs, reward, terminated, truncated, info


class RandomPolicy:
    """Seeded random actions, in the interface SB3's evaluate_policy calls (``predict``)."""

    def __init__(self, n_actions: int, seed: int) -> None:
        self.n_actions, self.rng = n_actions, np.random.default_rng(seed)

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False) -> Any:
        return self.rng.integers(self.n_actions, size=len(obs)), None


def test_atari_evaluation_reports_the_raw_game_score_not_the_clipped_reward() -> None:
    """SpaceInvaders scores 5 to 200 a hit: a clipped sum would count hits. Evaluation reports each whole game's
    score as the raw env pays it (recorded under SB3's AtariWrapper), while the agent sees rewards clipped to
    -1/0/1 and a lost life as the end of an episode."""
    cfg = compose_config("env=atari", "env.id=SpaceInvadersNoFrameskip-v4", "algo=ppo")
    with open_dict(cfg):  # the recorder right above Monitor, under the family's AtariWrapper
        recorder = {"_target_": f"{__name__}.RecordGameScores", "_partial_": True}
        cfg.env.wrappers = {"record": recorder, **cfg.env.wrappers}
    env = make_eval_env(cfg, n_envs=2)
    seen: list[tuple[float, bool]] = []  # (reward, done) of each step as the agent sees it
    RecordGameScores.games.clear()
    try:
        result = evaluate(
            RandomPolicy(env.action_space.n, seed=0),  # type: ignore[arg-type, attr-defined]
            env,
            episodes=2,
            on_step=lambda locals_, _: seen.append((float(locals_["reward"]), bool(locals_["done"]))),
        )
    finally:
        env.close()
    scores = [score for score, _ in RecordGameScores.games]
    assert len(result.returns) == 2 and all(r in scores for r in result.returns)  # whole games, raw score
    assert {reward for reward, _ in seen} <= {-1.0, 0.0, 1.0}  # what training sees: clipped
    clipped = dict(RecordGameScores.games)
    assert any(r > 0 for r in result.returns) and all(r != clipped[r] for r in result.returns if r > 0)
    assert sum(done for _, done in seen) > 2 * len(result.returns)  # the agent's episodes end with each life
