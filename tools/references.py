"""Write ``conf/benchmark/references.yaml``, the scores ``rlrun-table --aggregate`` normalises by (run by hand).

Per env id it holds a random policy's mean return (0 after normalising), measured here, and RL Zoo's published
figures (1 after normalising), read from the Zoo repository's ``benchmark.md`` (the ``rl_zoo3`` wheel does not
ship it)::

    python tools/references.py --random all                     # measure every env's random score
    python tools/references.py --random CartPole-v1 Pong...     # measure these, keep the others' values
    python tools/references.py --zoo-benchmark PATH/benchmark.md --zoo-commit 22e3ff2...   # re-read the figures

The file is written whole from :data:`ENVS` (which env ids, the Zoo's id for each and why it differs), the
values measured or read now and, for the rest, the values already in the file. A random score is the mean
return of ``--episodes`` episodes (default 100) of uniform random actions on ``gym.make(env_id)``, episode ``i``
reset with seed ``i`` and the action space seeded ``i``, so the same packages give the same numbers.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import yaml

DEFAULT = Path(__file__).resolve().parents[1] / "conf" / "benchmark" / "references.yaml"
ZOO_REPOSITORY = "https://github.com/DLR-RM/rl-baselines3-zoo"
# The Zoo's benchmark.md rows were last regenerated in this commit (git blame of every row), at Zoo version 1.8.0.
ZOO_ROWS = "61a0d13 (2023-04-11, rl-baselines3-zoo 1.8.0)"
ZOO_ALGOS = {"ppo_lstm": "recurrent_ppo"}  # the Zoo's algorithm names that rlrun's algo configs spell otherwise
MODULES = {"MiniGrid-": "minigrid", "Fetch": "gymnasium_robotics", "NoFrameskip": "ale_py"}  # id prefix/part

# env id here -> (the Zoo's env id for its figures, a note where they differ)
_MUJOCO = "MuJoCo v5 here; the Zoo's figures are for v3 (mujoco-py): same tasks, reward and termination revised in v5"
ENVS: dict[str, tuple[str | None, str]] = {
    "CartPole-v1": ("CartPole-v1", ""),
    "Acrobot-v1": ("Acrobot-v1", ""),
    "MountainCar-v0": ("MountainCar-v0", ""),
    "MountainCarContinuous-v0": ("MountainCarContinuous-v0", ""),
    "Pendulum-v1": ("Pendulum-v1", ""),
    "LunarLander-v3": ("LunarLander-v2", "the Zoo's figures are for v2 (v3 fixed the wind and moon physics bugs)"),
    "LunarLanderContinuous-v3": ("LunarLanderContinuous-v2", "the Zoo's figures are for v2"),
    "BipedalWalker-v3": ("BipedalWalker-v3", ""),
    "HalfCheetah-v5": ("HalfCheetah-v3", _MUJOCO),
    "Hopper-v5": ("Hopper-v3", _MUJOCO),
    "Walker2d-v5": ("Walker2d-v3", _MUJOCO),
    "Ant-v5": ("Ant-v3", _MUJOCO + " (v5 also drops the contact forces from observations)"),
    "Humanoid-v5": ("Humanoid-v3", _MUJOCO),
    "Swimmer-v5": ("Swimmer-v3", _MUJOCO),
    "Reacher-v5": (None, "the Zoo publishes no figure for Reacher (only ReacherBulletEnv-v0): add one to use it"),
    "FetchReach-v4": ("FetchReach-v1", "the Zoo's figures are for v1 (mujoco-py); v4 is Gymnasium-Robotics' on mujoco"),
    "FetchPush-v4": ("FetchPush-v1", "the Zoo's figures are for v1 (mujoco-py)"),
    "FetchSlide-v4": ("FetchSlide-v1", "the Zoo's figures are for v1 (mujoco-py)"),
    "FetchPickAndPlace-v4": ("FetchPickAndPlace-v1", "the Zoo's figures are for v1 (mujoco-py)"),
    "MiniGrid-DoorKey-5x5-v0": ("MiniGrid-DoorKey-5x5-v0", ""),
    "MiniGrid-Empty-Random-5x5-v0": ("MiniGrid-Empty-Random-5x5-v0", ""),
    "MiniGrid-FourRooms-v0": ("MiniGrid-FourRooms-v0", ""),
    "MiniGrid-GoToDoor-5x5-v0": ("MiniGrid-GoToDoor-5x5-v0", ""),
    "MiniGrid-KeyCorridorS3R1-v0": ("MiniGrid-KeyCorridorS3R1-v0", ""),
    "MiniGrid-PutNear-6x6-N2-v0": ("MiniGrid-PutNear-6x6-N2-v0", ""),
    "MiniGrid-RedBlueDoors-6x6-v0": ("MiniGrid-RedBlueDoors-6x6-v0", ""),
    "MiniGrid-Unlock-v0": ("MiniGrid-Unlock-v0", ""),
    "PongNoFrameskip-v4": ("PongNoFrameskip-v4", "Atari: the Zoo evaluates the full game (all lives), not clipped"),
    "BreakoutNoFrameskip-v4": ("BreakoutNoFrameskip-v4", "Atari: the Zoo evaluates the full game (all lives)"),
}
# rlrun's own envs: no Zoo figure; their trained agents' figures are rlrun's verified presets over seeds 0-9, as
# the presets benchmark measured them (BENCHMARKS.md `presets`; its table is benchmarks/results/presets/table.json).
OWN = {"rlrun/GridWorld-v0": "gridworld", "rlrun/PointEnv-v0": "pointenv", "rlrun/PointGoal-v0": "pointgoal"}
OWN |= {"rlrun/RoomToy-v0": "roomtoy"}
PRESETS_TABLE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "presets" / "table.json"
_OWN_NOTE = "rlrun's own env: its presets' figures (seeds 0-9, BENCHMARKS.md presets), not the Zoo's"
ENVS |= {env_id: (None, _OWN_NOTE) for env_id in OWN}

HEADER = """\
# References for `rlrun-table --aggregate` (DESIGN.md "Tables"): per Gymnasium env id, the mean return of a random
# policy (0 after normalising) and RL Zoo's published figures (1 after normalising). Written whole by
# `python tools/references.py` (see its docstring); edit ENVS there, not this file, or pass your own file with
# `--references FILE` (same layout; `algos` and `zoo` may be left out). Not a Hydra config: rlrun-table reads it.
# A run is normalised with the figure of its own algorithm (run.json's `algo`) when `algos` has one, else with the
# env's `reference`: the best of the Zoo's figures for that env.
# Zoo figures: {repository} benchmark.md, rows last regenerated in {rows},
# read at commit {commit};
# one trained agent per pair, mean ± std return over its evaluation episodes (deterministic policy; sampled
# actions for Atari and MiniGrid), `timesteps` its training budget.
# rlrun's own envs (rlrun/...): the figures of rlrun's verified presets instead, mean ± std return over seeds 0-9
# (`rlrun -m +benchmark=presets`, BENCHMARKS.md `presets`), so the default experiment can be aggregated too.
# Random: uniform random actions, {episodes} episodes, episode i reset with seed i (tools/references.py).
"""


def preset_figures(table_json: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """rlrun's own envs' figures from the presets benchmark's table: env id -> algo -> mean, std, timesteps."""
    import json

    rows = json.loads(table_json.read_text())["rows"]
    ids = {name: env_id for env_id, name in OWN.items()}
    return {
        ids[row["env"]]: {
            **{r["algo"]: {"mean": round(r["return_mean"], 4), "std": round(r["return_std"], 4), "timesteps": "preset"}
               for r in rows if r["env"] == row["env"] and r["return_mean"] is not None}
        }
        for row in rows
        if row["env"] in ids
    }  # fmt: skip


def _register(env_id: str) -> None:
    for part, module in MODULES.items():
        if part in env_id:
            gym.register_envs(importlib.import_module(module))


def random_score(env_id: str, episodes: int) -> float:
    """Mean return of ``episodes`` episodes of uniform random actions, episode ``i`` seeded ``i``."""
    _register(env_id)
    if env_id.startswith("rlrun/"):
        importlib.import_module("rlrun.envs")
    env = gym.make(env_id)
    returns = []
    for episode in range(episodes):
        env.reset(seed=episode)
        env.action_space.seed(episode)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    return float(np.mean(returns))


def zoo_figures(benchmark_md: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The Zoo's benchmark table: env id -> rlrun algo name -> mean, std, timesteps."""
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    for line in benchmark_md.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not re.fullmatch(r"-?[\d.]+", cells[2]):
            continue
        algo, env_id, mean, std, timesteps = cells[:5]
        figures.setdefault(env_id, {})[ZOO_ALGOS.get(algo, algo)] = {
            "mean": float(mean),
            "std": float(std),
            "timesteps": timesteps,
        }
    return figures


def _flow(figure: dict[str, Any]) -> str:
    return f"{{mean: {figure['mean']!r}, std: {figure['std']!r}, timesteps: {figure['timesteps']}}}"


def render(entries: dict[str, dict[str, Any]], episodes: int, commit: str) -> str:
    """The whole references file."""
    lines = [HEADER.format(repository=ZOO_REPOSITORY, rows=ZOO_ROWS, commit=commit, episodes=episodes)]
    for env_id, (zoo_env, note) in ENVS.items():
        entry = entries.get(env_id, {})
        algos = entry.get("algos") or {}
        random = entry.get("random")
        lines.append(f"{env_id}:")
        lines.append(f"  random: {'null' if random is None else repr(random)}  # mean return of random actions")
        if algos:
            best = max(sorted(algos), key=lambda a: algos[a]["mean"])  # ties: the first by name
            whose = "preset" if env_id in OWN else "Zoo figure"
            lines.append(f"  reference: {algos[best]['mean']!r}  # the best {whose} for this env ({best})")
        else:
            lines.append("  reference: null  # no Zoo figure: runs of this env are left out of aggregates")
        lines.append(f"  zoo: {zoo_env or 'null'}  # {note or 'the env id the Zoo figures are for'}")
        if algos:
            whose = "rlrun's preset's" if env_id in OWN else "the Zoo's"
            lines.append(f"  algos:  # {whose} figure per algorithm: mean ± std return, training budget")
            lines.extend(f"    {algo}: {_flow(algos[algo])}" for algo in sorted(algos))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--references", type=Path, default=DEFAULT, help="the file to rewrite")
    parser.add_argument("--random", nargs="*", default=[], metavar="ENV_ID", help="measure these (or: all)")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per random score")
    parser.add_argument("--zoo-benchmark", type=Path, help="the Zoo repository's benchmark.md to read figures from")
    parser.add_argument("--zoo-commit", default=None, help="the Zoo commit that benchmark.md was read at")
    parser.add_argument("--presets-table", type=Path, default=PRESETS_TABLE, help="rlrun's own envs' figures")
    args = parser.parse_args(argv)
    old = yaml.safe_load(args.references.read_text()) if args.references.is_file() else {}
    commit = args.zoo_commit or re.search(r"read at commit (\S+?);?\n", args.references.read_text()).group(1)  # type: ignore[union-attr]
    entries: dict[str, dict[str, Any]] = {env_id: dict(old.get(env_id) or {}) for env_id in ENVS}
    if args.zoo_benchmark is not None:
        figures = zoo_figures(args.zoo_benchmark.read_text())
        for env_id, (zoo_env, _) in ENVS.items():
            entries[env_id]["algos"] = figures.get(zoo_env or "", {})
    for env_id, algos in preset_figures(args.presets_table).items():
        entries[env_id]["algos"] = algos
    measure = list(ENVS) if args.random == ["all"] else args.random
    for env_id in measure:
        if env_id not in ENVS:
            parser.error(f"{env_id} is not one of the env ids in ENVS")
        entries[env_id]["random"] = round(random_score(env_id, args.episodes), 4)
        print(f"{env_id}: random {entries[env_id]['random']}", file=sys.stderr, flush=True)
    args.references.write_text(render(entries, args.episodes, commit))


if __name__ == "__main__":
    main()
