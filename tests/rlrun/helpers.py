"""Compose the real configs and shrink them to seconds of work (shared by the rlrun tests)."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import subprocess
import zipfile
from pathlib import Path

import torch
from hydra import compose, initialize_config_module
from omegaconf import DictConfig, open_dict
from stable_baselines3.common.callbacks import BaseCallback

# the benchmarks' too: a whole `python -m rlrun` run in about a second, the configs composed as `python -m rlrun` does
from benchmarks.common import TINY_RUN as TINY_RUN
from benchmarks.common import compose_config as compose_config
from rlrun.record import signatures
from tests import forked_commands

ROOT = Path(__file__).resolve().parents[2]

# Every env config with the algorithms that fit its spaces (the gym blank needs an id).
COMPATIBLE = {
    "gridworld": ["ppo", "a2c", "dqn"],
    "pointenv": ["ppo", "a2c", "sac", "td3"],
    "pointgoal": ["ppo", "a2c", "sac", "td3", "her"],
    "roomtoy": ["ppo", "a2c", "dqn"],
    "cartpole": ["ppo", "a2c", "dqn"],
    "pendulum": ["ppo", "a2c", "sac", "td3"],
}
PAIRS = [(env, algo) for env, algos in COMPATIBLE.items() for algo in algos]
# sb3-contrib's algorithms, each on envs that fit it (kept apart from PAIRS: every test of those would run them)
CONTRIB_PAIRS = [
    ("cartpole", "trpo"),
    ("pendulum", "trpo"),
    ("cartpole", "qrdqn"),
    ("cartpole", "ars"),
    ("cartpole", "recurrent_ppo"),
    ("pointgoal", "recurrent_ppo"),  # Dict observations: MultiInputLstmPolicy
    ("pendulum", "tqc"),
    ("pendulum", "crossq"),
    ("pointgoal", "her_tqc"),
]
# Envs of tests/rlrun/broken_envs.py by module form (gym.make imports the module): env=gym plus this override.
BROKEN = "env.id=tests.rlrun.broken_envs:broken/{}-v0"

# The budget of a tiny on-policy run (add env and algo): 256 steps, two evaluations and snapshots, a tiny net.
TINY_BUDGET = [
    "total_timesteps=256",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "snapshot.every=128",
    "algo.n_steps=32",
    "algo.batch_size=16",
    "algo.policy_kwargs={net_arch:[16]}",
]
# The quickest run that trains and evaluates at all (add env and algo): 64 steps, one evaluation of one episode.
QUICK_BUDGET = ["total_timesteps=64", "eval.every=64", "eval.episodes=1", "eval.final_episodes=1", "progress_bar=false"]


def compose_check(*overrides: str) -> DictConfig:
    """Compose ``conf/check.yaml`` as ``rlrun-check`` would."""
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        return compose("check", overrides=list(overrides))


def shrink(cfg: DictConfig, steps: int = 256) -> DictConfig:
    """Make a composed config train for ``steps`` steps with tiny nets, buffers and evaluations."""
    with open_dict(cfg):
        cfg.total_timesteps = steps
        cfg.eval.every = steps // 2
        cfg.eval.episodes = 2
        cfg.eval.final_episodes = 2
        cfg.snapshot.every = steps // 2
        cfg.progress_bar = "false"
        algo = cfg.algo
        if "buffer_size" in algo:  # off-policy
            algo.buffer_size = 1000
            algo.learning_starts = 100  # past the first episode, as HER needs
            algo.batch_size = 16
            if algo._target_.endswith("DQN"):
                algo.target_update_interval = 64
        elif "n_steps" in algo:  # on-policy: a short rollout
            algo.n_steps = max(8, 32 // cfg.env.n_envs)
            if "batch_size" in algo:
                algo.batch_size = 16
        if "n_delta" in algo:  # ARS: 2 * n_delta episodes per update
            algo.n_delta = 2
        algo.policy_kwargs = {"net_arch": [16]}
        if algo._target_.endswith("RecurrentPPO"):
            algo.policy_kwargs.lstm_hidden_size = 16
    return cfg


def parameters(run_dir: Path) -> dict[str, torch.Tensor]:
    """The policy parameters of a run's ``model.zip``, read without building the model."""
    with zipfile.ZipFile(run_dir / "model.zip") as archive:
        return torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=True)


def read_run_json(run_dir: Path) -> dict:
    """A run's ``run.json``."""
    return json.loads((run_dir / "run.json").read_text())


def eval_rows(run_dir: Path) -> list[list[str]]:
    """``eval.csv`` without the ``wall_s`` column."""
    with open(run_dir / "eval.csv") as f:
        return [row[:4] for row in csv.reader(f)]


def status(run_dir: Path) -> str:
    """The ``status`` of a run's ``run.json``."""
    return read_run_json(run_dir)["status"]


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python args`` in ``cwd`` (``cli(["-m", "rlrun", ...], cwd)``), its output captured."""
    return forked_commands.run([*args], cwd=cwd, timeout=300)


def run_with_packages(module: str, args: list[str], cwd: Path, path: Path) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` in ``cwd`` with a user's packages under ``path`` (and this checkout) importable."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    return forked_commands.run(["-m", module, *args], cwd=cwd, env=env, timeout=300)


def run_folder(folder: Path, signed: bool = True) -> Path:
    """A minimal run folder as rlrun writes one: config.yaml, run.json, a snapshot with its manifest."""
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("seed: 0\nwrappers:\n  scale:\n    _target_: rlrun.envs.wrappers.ScaleReward\n")
    (folder / "run.json").write_text(json.dumps({"status": "interrupted"}))
    if signed:
        signatures.sign_run(folder)
    snapshot = folder / "snapshots" / "step-0000000256"
    snapshot.mkdir(parents=True)
    (snapshot / "state.pkl").write_bytes(b"state")
    manifest = {"step": 256, "score": None, "files": {"state.pkl": signatures.sha256(snapshot / "state.pkl")}}
    (snapshot / "manifest.json").write_text(
        json.dumps(signatures.signed_snapshot(folder, manifest) if signed else manifest)
    )
    return folder


class RecordLocals(BaseCallback):
    """Keeps the names of ``collect_rollouts``' locals that the callbacks see at the first step."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def _on_step(self) -> bool:
        self.names = set(self.locals)
        return False


def assert_same_results(a: Path, b: Path) -> None:
    """Two runs trained bit-identical parameters and wrote the same evaluations (but wall_s)."""
    pa, pb = parameters(a), parameters(b)
    assert pa.keys() == pb.keys()
    assert all(torch.equal(pa[k], pb[k]) for k in pa), f"{a} and {b} trained different parameters"
    assert eval_rows(a) == eval_rows(b)


def assert_name_refused_before_anything(cwd: Path, *args: str) -> None:
    """``python -m <args>`` in the empty ``cwd`` refuses a sweep or study name that cannot name a folder: exit 2,
    the rule and its fix, no traceback, and nothing written."""
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    result = forked_commands.run(["-m", *args], cwd=cwd, env=env, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "cannot name a folder" in result.stderr and "fix: a name is one folder name" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(cwd.iterdir()) == []  # no outputs/, no sweep or study folder, no job


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server or cluster a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
