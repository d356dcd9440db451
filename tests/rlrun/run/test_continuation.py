"""Continuing a run to a larger budget: ``resume=RUN total_timesteps=N`` trains on from the run's final state."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
from hydra.utils import get_class
from omegaconf import DictConfig
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.config.errors import UserError
from rlrun.config.keys import config_hash
from rlrun.record import signatures
from rlrun.run import snapshots
from rlrun.run.training import resume, train
from tests import forked_commands
from tests.rlrun.helpers import TINY_RUN, compose_config, shrink

REPO = Path(__file__).resolve().parents[3]
RULE = "span {total} steps as if the run had been planned for them"
PPO_256 = [o for o in TINY_RUN if not o.startswith("total_timesteps=")]  # 256 steps, evaluations every 128


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun", *args], cwd=cwd, timeout=300)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def eval_rows(run_dir: Path) -> list[list[str]]:
    return [line.split(",")[:4] for line in (run_dir / "eval.csv").read_text().splitlines()[1:]]  # but wall_s


def eval_steps(run_dir: Path) -> list[int]:
    return [int(row[0]) for row in eval_rows(run_dir)]


def tb_steps(run_dir: Path) -> list[int]:
    accumulator = EventAccumulator(str(run_dir / "tb"), purge_orphaned_data=True)
    accumulator.Reload()
    return [event.step for event in accumulator.Scalars("eval/mean_reward")]


def same_parameters(cfg: DictConfig, a: Path, b: Path) -> bool:
    algo = get_class(cfg.algo._target_)
    first, second = (algo.load(d / "model.zip", device="cpu").policy.state_dict() for d in (a, b))
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_completed_ppo_run_continues_as_if_it_had_been_planned_for_the_larger_budget(tmp_path: Path) -> None:
    first = cli([*PPO_256, "total_timesteps=256", "hydra.run.dir=run"], tmp_path)
    assert first.returncode == 0, first.stderr
    continued = cli(["resume=run", "total_timesteps=512", "progress_bar=false"], tmp_path)
    assert continued.returncode == 0, continued.stderr
    assert RULE.format(total=512) in continued.stdout + continued.stderr

    run_dir = tmp_path / "run"
    data = record(run_dir)
    assert (data["status"], data["timesteps"], data["total_timesteps"]) == ("completed", 512, 512)
    assert data["budgets"] == [256, 512] and "total_timesteps=512" in data["overrides"]
    assert "total_timesteps: 512\n" in (run_dir / "config.yaml").read_text()
    assert eval_steps(run_dir) == [128, 256, 384, 512] == tb_steps(run_dir)  # continuous, no step twice
    signatures.check_run(run_dir, ("config.yaml", "model.zip"), "test")  # config.yaml signed again
    signatures.check_snapshots(run_dir, snapshots.list_snapshots(run_dir / "snapshots"), "test")

    straight_cfg = compose_config(*PPO_256, "total_timesteps=512")
    train(straight_cfg, tmp_path / "straight")  # PPO's schedules here are constant: the continuation is exact
    assert data["config_hash"] == config_hash(straight_cfg) == record(tmp_path / "straight")["config_hash"]
    assert eval_rows(run_dir) == eval_rows(tmp_path / "straight")
    assert same_parameters(straight_cfg, run_dir, tmp_path / "straight")


def scalars(run_dir: Path, tag: str, step: int) -> list[float]:
    """The values TensorBoard holds for ``tag`` at ``step``, in the order written."""
    accumulator = EventAccumulator(str(run_dir / "tb"), purge_orphaned_data=True)
    accumulator.Reload()
    return [event.value for event in accumulator.Scalars(tag) if event.step == step]


def test_schedules_span_the_new_total_as_if_the_run_had_been_planned_for_it(tmp_path: Path) -> None:
    linear = "{_target_:stable_baselines3.common.utils.LinearSchedule,start:0.001,end:0.0,end_fraction:1.0}"
    schedules = [f"algo.learning_rate={linear}", f"algo.clip_range={linear}"]
    overrides = [*PPO_256, "algo.n_steps=16", "algo.batch_size=64", *schedules]  # updates every 128 steps
    train(compose_config(*overrides, "total_timesteps=256"), tmp_path / "run")
    resume(tmp_path / "run", "false", total_timesteps=512)
    train(compose_config(*overrides, "total_timesteps=512"), tmp_path / "straight")
    # SB3 writes an update's values at the next rollout's end: at 512, the updates after steps 384 and 512 of a
    # 512-step plan, 1 - 384/512 and 0 of the schedule remaining (RL Zoo's -i would give 0.0005 and 0: a restart)
    for tag in ("train/learning_rate", "train/clip_range"):
        continued = scalars(tmp_path / "run", tag, 512)
        assert continued == pytest.approx([0.00025, 0.0]) and continued == scalars(tmp_path / "straight", tag, 512)


def test_completed_sac_run_continues_with_its_replay_buffer(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = shrink(compose_config("env=pendulum", "algo=sac"), 200)  # evaluations and snapshots every 100 steps
    train(cfg, tmp_path / "run")
    caplog.set_level(logging.INFO, logger="rlrun")
    resume(tmp_path / "run", "false", total_timesteps=300)
    assert RULE.format(total=300) in caplog.text and "no replay buffer" not in caplog.text

    data = record(tmp_path / "run")
    assert (data["status"], data["timesteps"], data["budgets"]) == ("completed", 300, [200, 300])
    assert eval_steps(tmp_path / "run") == [100, 200, 300]
    cfg.total_timesteps = 300
    train(cfg, tmp_path / "straight")  # the same steps straight: the buffer, optimisers and generators carried on
    assert eval_rows(tmp_path / "run") == eval_rows(tmp_path / "straight")
    assert same_parameters(cfg, tmp_path / "run", tmp_path / "straight")


def test_a_run_without_its_replay_buffer_continues_with_an_empty_one_after_saying_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = shrink(compose_config("env=gridworld", "algo=dqn", "snapshot.replay_buffer=none"), 256)
    train(cfg, tmp_path)
    caplog.set_level(logging.INFO, logger="rlrun")
    resume(tmp_path, "false", total_timesteps=384)
    said = [r.getMessage() for r in caplog.records if "holds no replay buffer" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and "continuing with an empty one" in said[0]
    assert record(tmp_path)["budgets"] == [256, 384] and record(tmp_path)["status"] == "completed"


def test_a_budget_not_above_the_runs_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    cfg = compose_config(*PPO_256, "total_timesteps=256")
    train(cfg, tmp_path / "run")
    before = tree(tmp_path / "run")
    for total in ("256", "100"):
        refused = cli(["resume=run", f"total_timesteps={total}"], tmp_path)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert "planned for 256 steps" in refused.stderr and "fix: give total_timesteps= above 256" in refused.stderr
    assert tree(tmp_path / "run") == before

    snapshots.remove(tmp_path / "run" / "snapshots" / snapshots.snapshot_name(256))  # as runs of older rlrun versions
    with pytest.raises(UserError, match="no complete snapshot of its last step 256"):
        resume(tmp_path / "run", "false", total_timesteps=512)


def test_continuation_stopped_by_sigint_resumes(tmp_path: Path) -> None:
    first = cli([*PPO_256, "total_timesteps=256", "eval.every=256", "hydra.run.dir=run"], tmp_path)
    assert first.returncode == 0, first.stderr
    run_dir = tmp_path / "run"
    process = forked_commands.Popen(
        ["-m", "rlrun", "resume=run", "total_timesteps=4096", "progress_bar=false"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and max(eval_steps(run_dir)) <= 256:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # from this process, as a terminal's Ctrl-C
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    stopped = record(run_dir)
    assert stopped["status"] == "interrupted" and 256 < stopped["timesteps"] < 4096
    assert stopped["budgets"] == [256, 4096]

    resumed = cli(["resume=run", "progress_bar=false"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    data = record(run_dir)
    assert (data["status"], data["timesteps"], data["budgets"]) == ("completed", 4096, [256, 4096])
    steps = eval_steps(run_dir)
    assert steps == list(range(256, 4097, 256)) == tb_steps(run_dir)
