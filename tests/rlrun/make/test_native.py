"""``env.vectorization=native`` (rlrun/make/native.py): the train env is the batched env under ``VecMonitor``, what it
cannot do is refused before a run starts, and real (tiny) training on it through ``rlrun.run.training.train``.

For the envs that draw nothing while stepping, a run on native envs trains the very model a run on gym envs
trains: same observations, rewards, episode ends and starting states, so the same updates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from rlrun.envs.batched import BatchedVecEnv
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.config.errors import UserError
from rlrun.make import vec_envs
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, parameters, shrink


def train_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: int, *overrides: str
) -> tuple[dict[str, torch.Tensor], ...]:
    """Train the config on gym envs, then on native envs; the policies' tensors of both."""
    batched_steps = []
    step_wait = BatchedVecEnv.step_wait
    monkeypatch.setattr(BatchedVecEnv, "step_wait", lambda self: batched_steps.append(1) or step_wait(self))
    trained = []
    for vectorization in ("gym", "native"):
        cfg = shrink(compose_config(*overrides, f"env.vectorization={vectorization}"), steps)
        run_dir = tmp_path / vectorization
        train(cfg, run_dir, {"env": cfg.env.id, "algo": cfg.algo._target_})
        assert json.loads((run_dir / "run.json").read_text())["status"] == "completed"
        trained.append(parameters(run_dir))
        assert (len(batched_steps) > 0) == (vectorization == "native")  # the batched env trained, not gym's
    return tuple(trained)


def assert_same(gym_params: dict[str, torch.Tensor], native_params: dict[str, torch.Tensor]) -> None:
    assert gym_params.keys() == native_params.keys()
    assert all(torch.equal(gym_params[k], native_params[k]) for k in gym_params)


def test_ppo_on_native_gridworld_trains_the_model_gym_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Wrappers, normalisation and the NaN check on top of the batched env, as on gym envs.
    overrides = ["env=gridworld", "algo=ppo", "env.n_envs=4", "wrappers=[relative_position,scale_reward]"]
    overrides += ["env.normalize.obs=true", "env.normalize.reward=true", "check_nan=true"]
    assert_same(*train_both(tmp_path, monkeypatch, 256, *overrides))
    events = EventAccumulator(str(tmp_path / "native" / "tb")).Reload()
    assert "rollout/ep_rew_mean" in events.Tags()["scalars"]  # VecMonitor's episode statistics reach SB3


def test_her_on_native_pointgoal_trains_the_model_gym_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # HER asks the env for compute_reward through env_method, and relabels with it.
    assert_same(*train_both(tmp_path, monkeypatch, 300, "env=pointgoal", "algo=her", "env.n_envs=2"))


def test_the_train_env_is_the_batched_env_under_vec_monitor() -> None:
    from rlrun.envs.batched import BatchedGridWorld
    from stable_baselines3.common.vec_env import VecMonitor

    cfg = shrink(compose_config("env=gridworld", "env.n_envs=64", "env.vectorization=native"))
    venv = vec_envs.make_train_env(cfg)
    assert isinstance(venv, VecMonitor) and isinstance(venv.unwrapped, BatchedGridWorld)
    assert venv.num_envs == 64


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["env=cartpole"], r"(?s)'CartPole-v1'.*no native batched version.*env.vectorization=gym"),
        (["env=pointenv", "wrappers=[frame_stack]"], r"(?s)'frame_stack'.*no batched version.*env.vectorization=gym"),
        (["env=gridworld", "env.vec_env=subproc"], r"env.vec_env=subproc applies to env.vectorization=gym only"),
    ],
    ids=["no-native-version", "wrapper", "subproc"],
)
def test_what_native_cannot_do_is_refused_before_the_run_starts(
    tmp_path: Path, overrides: list[str], message: str
) -> None:
    cfg = shrink(compose_config(*overrides, "env.vectorization=native"))
    with pytest.raises(UserError, match=message):
        train(cfg, tmp_path / "run", {})
    assert not (tmp_path / "run" / "run.json").exists()


def test_a_native_run_resumed_from_its_snapshot_is_bit_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlrun.run.training import resume
    from tests.rlrun.helpers import eval_rows
    from tests.rlrun.kill_during_snapshot import config
    from tests.rlrun.resume_helpers import Crash, crash_at

    overrides, steps = ["env=gridworld", "algo=ppo", "env.n_envs=4", "env.vectorization=native"], 512
    with monkeypatch.context() as patch:
        crash_at(patch, 300)  # mid-rollout, past the second snapshot (every 128 steps)
        with pytest.raises(Crash):
            train(config(*overrides, steps=steps), tmp_path / "crashed", {})
    resume(tmp_path / "crashed", progress_bar="false")
    train(config(*overrides, steps=steps), tmp_path / "whole", {})
    assert eval_rows(tmp_path / "crashed") == eval_rows(tmp_path / "whole")
    assert_same(parameters(tmp_path / "whole"), parameters(tmp_path / "crashed"))
