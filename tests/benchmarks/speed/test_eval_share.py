"""Evaluation's share of a run (benchmarks/speed/eval_share.py): the verified presets, run as a user starts them."""

from __future__ import annotations

from pathlib import Path

from benchmarks.speed import eval_share


def test_every_verified_preset_runs_as_a_user_starts_it() -> None:
    assert len(eval_share.PAIRS) == 13 and "minigrid_empty_5x5_ppo" in eval_share.PAIRS
    cmd = eval_share._command("minigrid_empty_5x5_ppo", Path("/tmp/run"), quick=False)
    assert cmd[2:] == [
        "rlrun",
        "env=minigrid_empty_5x5",
        "algo=ppo",
        "seed=0",
        "progress_bar=false",
        "hydra.run.dir=/tmp/run",
    ]
    defaults = eval_share._command(eval_share.DEFAULTS, Path("/tmp/run"), quick=False)
    assert defaults[2:6] == ["rlrun", "env=cartpole", "algo=ppo", "~tuned"]  # every evaluation default applies


def test_the_share_is_eval_s_over_wall_s_against_five_per_cent() -> None:
    settings = {"every": 10_000, "episodes": 5, "final_episodes": 5, "n_envs": 5}
    results = {
        "a_ppo": {"steps": 100_000, "wall_s": 100.0, "eval_s": 5.0, "eval": settings},
        "b_sac": {"steps": 20_000, "wall_s": 40.0, "eval_s": 2.4, "eval": settings},
    }
    rows = eval_share.rows(results)
    assert rows[0][4:] == ["5.00", "5.0%", "met"]
    assert rows[1][4:] == ["2.40", "6.0%", "NOT met"]
    assert rows[0][2] == "10,000 / 5 / 5 / 5"
