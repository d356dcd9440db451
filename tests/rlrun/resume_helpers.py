"""Runs stopped on purpose (a crash in this process, SIGKILL or a signal to a child) and resumed, and the checks
that a resumed run matches one never stopped (shared by the snapshot, resume, signal and tracking tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import torch
from hydra.utils import get_class
from omegaconf import DictConfig

from rlrun.make import models, vec_envs
from rlrun.run import interrupts, snapshots
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import cli, eval_rows
from tests.rlrun.kill_during_snapshot import STEPS, config

REPO = Path(__file__).resolve().parents[2]
# The settings of a run that tests/rlrun/signal_run.py signals (add env, algo and budget): evaluations at 80,
# after which the signals are sent, and snapshots every 128 steps.
SIGNALLED_RUN_SETTINGS = [
    "~tuned",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=80",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=1",
    "snapshot.every=128",
    "progress_bar=false",
]


class Crash(Exception):
    """Stands in for a process dying mid-run (in-process tests)."""


def crash_at(monkeypatch: pytest.MonkeyPatch, step: int) -> None:
    """Make training raise :class:`Crash` once it has reached ``step`` (until ``monkeypatch`` is undone)."""
    original = interrupts.InterruptCallback._on_step

    def on_step(self: interrupts.InterruptCallback) -> bool:
        if self.num_timesteps >= step:
            raise Crash
        return original(self)

    monkeypatch.setattr(interrupts.InterruptCallback, "_on_step", on_step)


def interrupted(run_dir: Path) -> Path:
    """A GridWorld PPO run stopped (a crash) after its snapshots at 256 and 512 steps; its newest snapshot."""
    with pytest.MonkeyPatch.context() as patch:
        crash_at(patch, int(STEPS * 0.6))
        with pytest.raises(Crash):
            train(config("env=gridworld", "algo=ppo"), run_dir)
    return snapshots.list_snapshots(run_dir / "snapshots")[-1]


def kill_child(run_dir: Path, point: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the kill helper in a child process: train (or ``resume``) until SIGKILL at ``point``."""
    return forked_commands.run(
        ["-m", "tests.rlrun.kill_during_snapshot", str(run_dir), point, *args], cwd=REPO, timeout=300
    )


def stop_by_signal(run_dir: Path, name: str, count: int, overrides: list[str], target: str = "self") -> int:
    """Run ``python -m rlrun`` (in its own session) that gets ``count`` signals after the evaluation at 80; its exit
    status (``target``: the signals go to the process itself or to its whole group)."""
    args = ["-m", "tests.rlrun.signal_run", name, str(count), "80", target]
    args += [*overrides, *SIGNALLED_RUN_SETTINGS, f"hydra.run.dir={run_dir}"]
    result = forked_commands.run(args, cwd=REPO, timeout=300, start_new_session=True)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode


def resume_in_fresh_process(run_dir: Path) -> None:
    """``python -m rlrun resume=<run_dir>`` to the end, in a process of its own."""
    result = cli(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], run_dir.parent)
    assert result.returncode == 0, result.stderr


def snapshot_steps(run_dir: Path) -> list[int]:
    """The steps of a run's snapshots, oldest first."""
    return [snapshots.step_of(s) for s in snapshots.list_snapshots(run_dir / "snapshots")]


def loaded_policy_state(cfg: DictConfig, run_dir: Path) -> dict[str, torch.Tensor]:
    """The policy's state dict of a run's ``model.zip``, loaded by the run's algorithm class (HER with its env)."""
    env = vec_envs.make_vec(cfg, 1, seed=0) if models.uses_her(cfg) else None
    return get_class(cfg.algo._target_).load(run_dir / "model.zip", env=env, device="cpu").policy.state_dict()


def assert_bit_identical(run_dir: Path, whole: Path, cfg: DictConfig) -> None:
    """Two runs of ``cfg`` wrote the same evaluations (but wall_s) and trained bit-identical policies."""
    assert eval_rows(run_dir) == eval_rows(whole)
    ours, theirs = loaded_policy_state(cfg, run_dir), loaded_policy_state(cfg, whole)
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
