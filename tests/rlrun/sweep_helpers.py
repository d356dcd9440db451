"""Sweeps and studies as a user starts them (``python -m rlrun -m ...``, ``rlrun-tune``), their budgets, and the
sweep's processes found through /proc (shared by the sweep, launcher, stop, tune and tracking tests)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from tests import forked_commands

ROOT = Path(__file__).resolve().parents[2]

# GridWorld PPO (its preset with a smaller budget): long enough to be stopped between two snapshots
GRIDWORLD_2048_STEPS = [
    "env=gridworld",
    "algo=ppo",
    "total_timesteps=2048",
    "algo.n_steps=16",
    "algo.batch_size=64",
    "algo.n_epochs=2",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=1024",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=2",
    "snapshot.every=256",
]
# GridWorld PPO (its preset, a smaller budget and net) for the launchers: 32 rollouts of 128 steps, a snapshot every 2
GRIDWORLD_4096_STEPS = [
    "env=gridworld",
    "algo=ppo",
    "total_timesteps=4096",
    "algo.n_steps=16",
    "algo.batch_size=64",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=2048",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=2",
    "snapshot.every=256",
]
# Two joblib jobs of 8192 steps at once: long enough to be stopped while both train
TWO_JOB_SWEEP = [
    *GRIDWORLD_2048_STEPS,
    "total_timesteps=8192",
    "seed=0,1",
    "hydra/launcher=joblib",
    "hydra.launcher.n_jobs=2",
]

# A few hundred steps of PPO with a tiny net for each seed of a study: two evaluations (256, 512), two final episodes.
TINY_STUDY_BUDGET = [
    "total_timesteps=512",
    "eval.every=256",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=2",
    "snapshot.every=512",
    "env.n_envs=1",
    "algo.n_steps=128",
    "algo.batch_size=64",
    "algo.n_epochs=2",
]
# A study of two seeds per trial on GridWorld PPO (add tune.trials and tune.validate_seeds)
SMALL_STUDY = ["env=gridworld", "algo=ppo", *TINY_STUDY_BUDGET, "tune.seeds=2", "tune.study=small"]
# The search spaces tune_command writes (by name), as a user's conf/search_space/<name>.yaml
SEARCH_SPACES = {
    "tiny": {
        "algo.learning_rate": {"type": "float", "low": 1.0e-4, "high": 1.0e-2, "log": True},
        "algo.policy_kwargs.net_arch": {"type": "categorical", "choices": [[16], [32]]},
    },
    # 100-step episodes score far below 10-step ones: hyperband prunes the second trial at its first rung.
    "episodes": {"env.max_episode_steps": {"type": "categorical", "choices": [10, 100]}},
    # an infinite entropy bonus passes every check, then training raises on NaN logits
    "crash": {"algo.learning_rate": {"type": "categorical", "choices": [0.0003, 1.0e30]}},
}
# Bad search space entries (a case name -> the entries and the words of the message that names them)
BAD_SPACE_ENTRIES: dict[str, tuple[dict[str, Any], str]] = {
    "unknown key": ({"algo.lerning_rate": {"type": "float", "low": 0.1, "high": 1}}, "not an argument of PPO"),
    "low above high": ({"algo.gamma": {"type": "float", "low": 0.99, "high": 0.9}}, "low=0.99 > high=0.9"),
    "log with low 0": ({"algo.ent_coef": {"type": "float", "low": 0, "high": 1, "log": True}}, "needs low > 0"),
    "empty choices": ({"algo.n_steps": {"type": "categorical", "choices": []}}, "non-empty list"),
    "unknown type": ({"algo.gamma": {"type": "uniform", "low": 0.9, "high": 0.99}}, "unknown type 'uniform'"),
    "unknown field": ({"algo.gamma": {"type": "float", "low": 0.9, "hi": 0.99}}, "hi is not a field"),
    "wrong value type": ({"algo.n_steps": {"type": "categorical", "choices": [64, "many"]}}, "wrong type"),
    "not trained on": ({"seed": {"type": "int", "low": 0, "high": 9}}, "does not change what is trained"),
    "not in the config": ({"total_timestep": {"type": "int", "low": 1, "high": 9}}, "not a key of the config"),
}

Process = tuple[int, int]  # pid and start time


def sweep_command(args: list[str]) -> list[str]:
    """The command line of the sweep ``python -m rlrun -m args``."""
    return ["-m", "rlrun", "-m", *args]


def sweep(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the sweep ``args`` in ``cwd`` to its end, with ``cwd`` importable (a user's env modules there)."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(cwd)}
    return forked_commands.run(sweep_command(args), cwd=cwd, env=env, timeout=300)


def start_sweep(args: list[str], cwd: Path) -> forked_commands.Popen:
    """The sweep, its output into ``cwd/sweep.out`` (a pipe would stay open as long as any worker lives)."""
    with open(cwd / "sweep.out", "wb") as out:
        return forked_commands.Popen(
            sweep_command(args),
            cwd=cwd,
            env={**os.environ, "HYDRA_FULL_ERROR": "0"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own: only what the test sends reaches it
        )


def _stat(pid: int) -> tuple[int, str, int] | None:
    """The parent pid, state and start time of ``pid``; None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root: int) -> set[Process]:
    """Every living process below ``root``."""
    parents: dict[int, list[Process]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and stat[1] != "Z":
            parents.setdefault(stat[0], []).append((int(entry.name), stat[2]))
    found: set[Process] = set()
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child[0])
    return found


def alive(processes: set[Process]) -> set[Process]:
    """Those of ``processes`` still running (a zombie counts as ended)."""
    left = set()
    for pid, started in processes:
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[1] != "Z":
            left.add((pid, started))
    return left


def running_jobs(process: subprocess.Popen[bytes], sweep_dir: Path, count: int) -> set[Process]:
    """Wait until ``count`` jobs have written a snapshot; the sweep's processes noted meanwhile."""
    seen: set[Process] = set()
    deadline = time.monotonic() + 240
    while len({p.parents[2] for p in sweep_dir.glob("gridworld-ppo/*/seed-*/snapshots/step-*/manifest.json")}) < count:
        assert process.poll() is None and time.monotonic() < deadline, "the jobs never wrote a snapshot"
        seen |= descendants(process.pid)
        time.sleep(0.05)
    return seen | descendants(process.pid)


def wait_until_gone(processes: set[Process], timeout_s: float) -> set[Process]:
    """Wait up to ``timeout_s`` for ``processes`` to end; those still alive then."""
    deadline = time.monotonic() + timeout_s
    while alive(processes) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive(processes)


def tune_command(tmp_path: Path, *args: str, space: str = "tiny") -> list[str]:
    """The ``rlrun-tune`` command of a study over ``SEARCH_SPACES[space]`` (written under ``tmp_path/conf``)."""
    conf = tmp_path / "conf" / "search_space"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / f"{space}.yaml").write_text(f"# {space}\n" + yaml.safe_dump(SEARCH_SPACES[space]))
    return ["-m", "rlrun.cli.tune", f"--config-dir={tmp_path / 'conf'}", f"search_space={space}", *args]


def run_tune(tmp_path: Path, *args: str, space: str = "tiny") -> subprocess.CompletedProcess[str]:
    """Run :func:`tune_command` in ``tmp_path`` to its end, this checkout importable."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = tune_command(tmp_path, *args, space=space)
    return forked_commands.run(command, cwd=tmp_path, env=env, timeout=600)
