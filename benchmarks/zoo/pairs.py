"""The RL Zoo speed comparison pair by pair: whole runs at the Zoo's hyperparameters and budgets, both sides.

Each pair of the Zoo reproduction (``conf/benchmark/zoo_pair/``) whose Zoo budget fits a benchmark run is
trained by three sides, alternating, whole processes timed: the Zoo as it runs by default (``rl_zoo3.train``,
torch's default threads, evaluation every 25,000 steps on 5 episodes), the Zoo at one torch thread
(``--num-threads 1``) and rlrun as it runs by default (one torch thread, its evaluations and snapshots). Three
ratios come out: rlrun's wall time over the Zoo's default, over the Zoo's at one thread, and rlrun's CPU seconds
over the Zoo's default. The measurements are kept per pair in ``benchmarks/results/zoo/pairs.json`` so that the pairs
can be measured in several invocations (``--pairs``) and the section is written from all of them.

The user-level figure: the wall time to the 10-seed results of three pairs, rlrun's joblib sweep (two jobs at a
time, its table written at the end) against the Zoo run seed after seed as its documentation shows. Only wall
time is compared there: the sweep's jobs run in joblib's worker processes, whose CPU time the timing launcher
does not see.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import PYTHON, RESULTS, ROOT, ZOO_PYTHON, median, run_process

CACHE = RESULTS / "zoo" / "pairs.json"  # the measurements, pair by pair
USER_LEVEL_KEPT = RESULTS / "zoo" / "user_level.json"  # the user-level figure
SIDES = ("zoo defaults", "zoo 1 thread", "rlrun defaults", "rlrun at zoo eval")
# rlrun at the Zoo's evaluation settings (every 25,000 steps on 5 episodes; one final episode where rlrun's default
# is 50): the same training with the evaluation work the Zoo does, to measure what rlrun's evaluations cost.
ZOO_EVAL = ("eval.every=25000", "eval.episodes=5", "eval.n_envs=5", "eval.final_episodes=1")
# The Zoo's torch threads at its default: more than this many CPU seconds per wall second counts as two cores.
ONE_CORE = 1.3
GOALS = {"default": 1.0, "equal threads": 0.95, "per CPU-second": 0.7}
USER_LEVEL = ("cartpole_ppo", "cartpole_dqn", "lunarlander_a2c")
USER_SEEDS = 10


@dataclass(frozen=True)
class Pair:
    """One Zoo pair: rlrun's env and algo configs, the Zoo's ``--algo`` and ``--env``, the Zoo's budget."""

    name: str  # conf/benchmark/zoo_pair/<name>.yaml
    env: str
    algo: str
    zoo_algo: str
    zoo_env: str
    steps: int
    quick: int  # steps of a --quick run

    def rlrun(self) -> list[str]:
        """rlrun's overrides for the Zoo's hyperparameters: the preset (``conf/tuned/``, the Zoo's values) or,
        where rlrun's own preset is tuned for wall time instead, ``conf/benchmark/zoo/``."""
        if (ROOT / "conf" / "benchmark" / "zoo" / f"{self.name}.yaml").exists():
            return [f"env={self.env}", f"algo={self.algo}", "~tuned", f"+benchmark/zoo={self.name}"]
        return [f"env={self.env}", f"algo={self.algo}"]

    def zoo(self) -> list[str]:
        return ["-m", "rl_zoo3.train", "--algo", self.zoo_algo, "--env", self.zoo_env]


PAIRS = {
    pair.name: pair
    for pair in (
        Pair("cartpole_ppo", "cartpole", "ppo", "ppo", "CartPole-v1", 100_000, 2_048),
        Pair("cartpole_dqn", "cartpole", "dqn", "dqn", "CartPole-v1", 50_000, 2_000),
        Pair(
            "minigrid_doorkey_5x5_ppo", "minigrid_doorkey_5x5", "ppo", "ppo", "MiniGrid-DoorKey-5x5-v0", 100_000, 2_048
        ),
        Pair("lunarlander_a2c", "lunarlander", "a2c", "a2c", "LunarLander-v3", 200_000, 2_000),
        Pair("cartpole_a2c", "cartpole", "a2c", "a2c", "CartPole-v1", 500_000, 2_000),
        Pair("acrobot_a2c", "acrobot", "a2c", "a2c", "Acrobot-v1", 500_000, 2_000),
        Pair("pendulum_sac", "pendulum", "sac", "sac", "Pendulum-v1", 20_000, 300),
    )
}


def _commands(pair: Pair, steps: int, work: Path, rep: int) -> dict[str, list[str]]:
    tag = f"{pair.name}-{rep}"
    zoo = [str(ZOO_PYTHON), *pair.zoo(), "-n", str(steps), "--seed", "0"]
    rlrun = [PYTHON, "-m", "rlrun", *pair.rlrun(), f"total_timesteps={steps}", "progress_bar=false"]
    return {
        "zoo defaults": zoo + ["-f", str(work / f"zoo-{tag}")],
        "zoo 1 thread": zoo + ["--num-threads", "1", "-f", str(work / f"zoo1-{tag}")],
        "rlrun defaults": rlrun + [f"hydra.run.dir={work / f'rlrun-{tag}'}"],
        "rlrun at zoo eval": rlrun + [*ZOO_EVAL, f"hydra.run.dir={work / f'rlrun-zoo-eval-{tag}'}"],
    }


def measure(pair: Pair, steps: int, reps: int, work: Path) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU seconds and peak MB of each side, ``reps`` times, the sides alternating."""
    found: dict[str, dict[str, list[float]]] = {side: {"wall": [], "cpu": [], "peak": []} for side in SIDES}
    # (pairs kept before "rlrun at zoo eval" was a side have three; rows() shows its column empty for them)
    for rep in range(reps):
        for side, cmd in _commands(pair, steps, work, rep).items():
            proc = run_process(cmd, work / "logs" / f"{pair.name}-{side.replace(' ', '_')}-{rep}.log")
            found[side]["wall"].append(round(proc.wall_s, 3))
            found[side]["cpu"].append(round(proc.cpu_s, 3))
            found[side]["peak"].append(round(proc.peak_mb, 1))
            print(f"{pair.name} {side} rep {rep}: {proc.wall_s:.1f} s wall, {proc.cpu_s:.1f} s CPU", flush=True)
    return found


def measure_pairs(names: list[str], reps: int, quick: bool, work: Path, cache: Path = CACHE) -> dict[str, dict]:
    """Measure ``names`` and keep them in ``cache`` (a quick run keeps nothing); returns every kept pair."""
    kept = json.loads(cache.read_text()) if cache.exists() else {}
    measured = {}
    for name in names:
        pair = PAIRS[name]
        steps = pair.quick if quick else pair.steps
        measured[name] = {
            "steps": steps,
            "reps": reps,
            "date": datetime.date.today().isoformat(),
            "sides": measure(pair, steps, reps, work),
        }
        if not quick:
            kept[name] = measured[name]
            cache.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    return measured if quick else {name: kept[name] for name in PAIRS if name in kept}


def _verdict(ratio: float, goal: float | None) -> str:
    if goal is None:
        return ""
    return f"<= {goal}: {'met' if ratio <= goal else 'NOT met'}"


def rows(results: dict[str, dict]) -> list[list[str]]:
    """One row per pair: medians of each side and the three ratios with their goals."""
    table = []
    for name, result in results.items():
        sides = result["sides"]
        wall = {side: median(sides[side]["wall"]) for side in SIDES if sides.get(side, {}).get("wall")}
        cpu = {side: median(sides[side]["cpu"]) for side in SIDES if sides.get(side, {}).get("cpu")}
        zoo_cores = cpu["zoo defaults"] / wall["zoo defaults"]
        default = wall["rlrun defaults"] / wall["zoo defaults"]
        equal = wall["rlrun defaults"] / wall["zoo 1 thread"]
        per_cpu = cpu["rlrun defaults"] / cpu["zoo defaults"]
        peak = {side: median(sides[side]["peak"]) for side in SIDES if sides.get(side, {}).get("peak")}
        at_zoo_eval = wall.get("rlrun at zoo eval")
        zoo_eval = "" if at_zoo_eval is None else f"{at_zoo_eval:.1f} ({at_zoo_eval / wall['zoo 1 thread']:.3f})"
        table.append(
            [
                f"`{name}`",
                f"{result['steps']:,}",
                f"{wall['zoo defaults']:.1f} ({zoo_cores:.1f})",
                f"{wall['zoo 1 thread']:.1f}",
                f"{wall['rlrun defaults']:.1f}",
                f"{default:.3f} {_verdict(default, GOALS['default'] if zoo_cores <= ONE_CORE else None)}",
                f"{equal:.3f} {_verdict(equal, GOALS['equal threads'])}",
                f"{per_cpu:.3f} {_verdict(per_cpu, GOALS['per CPU-second'])}",
                zoo_eval,
                f"{peak['zoo defaults']:.0f} / {peak['rlrun defaults']:.0f}",
                f"{result['reps']}, {result['date']}",
            ]
        )
    return table


HEADER = [
    "pair",
    "steps",
    "zoo s (cores)",
    "zoo 1 thread s",
    "rlrun s",
    "default ratio",
    "equal threads",
    "per CPU-second",
    "rlrun at zoo eval s (/ zoo 1 thread)",
    "peak MB zoo / rlrun",
    "reps, measured",
]


def user_level(
    work: Path, quick: bool, sweep_pairs: tuple[str, ...] = USER_LEVEL
) -> dict[str, float | int | str | list[str]]:
    """Wall seconds to the 10-seed results of the ``USER_LEVEL`` pairs: rlrun's sweep against the Zoo's loop.
    ``sweep_pairs``: what rlrun's sweep runs of them (``conf/benchmark/zoo_pair/``; ``cartpole_dqn_jax`` on jax)."""
    seeds = 2 if quick else USER_SEEDS
    budget = ["total_timesteps=2048"] if quick else []
    sweep = [PYTHON, "-m", "rlrun", "-m", f"+benchmark/zoo_pair={','.join(sweep_pairs)}", f"seed=range(0,{seeds})"]
    sweep += ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "sweep=user-level", "progress_bar=false", *budget]
    (work / "user").mkdir(parents=True, exist_ok=True)
    rlrun = run_process(sweep, work / "logs" / "user-rlrun.log", cwd=work / "user")
    table = work / "user" / "outputs" / "sweeps" / "user-level" / "table.md"
    if not table.exists():
        raise RuntimeError(f"rlrun's sweep wrote no table ({table})")
    zoo_wall = zoo_cpu = 0.0
    zoo_pairs = dict.fromkeys(USER_LEVEL, 0.0)
    for seed in range(seeds):
        for name in USER_LEVEL:
            pair = PAIRS[name]
            steps = ["-n", "2048"] if quick else []
            cmd = [str(ZOO_PYTHON), *pair.zoo(), *steps, "--seed", str(seed), "-f", str(work / "user-zoo")]
            proc = run_process(cmd, work / "logs" / f"user-zoo-{name}-{seed}.log")
            zoo_wall += proc.wall_s
            zoo_cpu += proc.cpu_s
            zoo_pairs[name] = round(zoo_pairs[name] + proc.wall_s, 1)
            print(f"user level: zoo {name} seed {seed}: {proc.wall_s:.1f} s", flush=True)
    return {
        "seeds": seeds,
        "rlrun_pairs": list(sweep_pairs),
        "rlrun_wall": round(rlrun.wall_s, 1),
        "rlrun_pair_s": job_seconds(table.parent),
        "zoo_wall": round(zoo_wall, 1),
        "zoo_cpu": round(zoo_cpu, 1),
        "zoo_pair_s": zoo_pairs,
        "date": datetime.date.today().isoformat(),
    }


def job_seconds(sweep: Path) -> dict[str, float]:
    """Per pair of a user-level sweep (``+benchmark/zoo_pair=``): its jobs' seconds added up (run.json's wall_s)."""
    found: dict[str, float] = {}
    for record in sorted(sweep.rglob("run.json")):
        run = json.loads(record.read_text())
        pair = next(o.split("=", 1)[1] for o in run["overrides"] if o.startswith("+benchmark/zoo_pair="))
        found[pair] = round(found.get(pair, 0.0) + run["wall_s"], 1)
    return found


def user_level_lines(figure: dict) -> list[str]:
    """The user-level figure as Markdown."""
    pairs = ", ".join(f"`{name}`" for name in USER_LEVEL)
    ratio = figure["rlrun_wall"] / figure["zoo_wall"]
    return [
        f"**User level** ({figure['date']}): the {figure['seeds']}-seed results of {pairs} at the Zoo's budgets.",
        f"rlrun, one command: `rlrun -m +benchmark/zoo_pair={','.join(USER_LEVEL)} 'seed=range(0,{figure['seeds']})'"
        " hydra/launcher=joblib hydra.launcher.n_jobs=2` (two jobs at a time on the 2 cores, the table written at"
        f" its end): {figure['rlrun_wall']:.0f} s wall.",
        f"The Zoo as its documentation shows, seed after seed: `for seed in 0..{figure['seeds'] - 1}: python -m"
        " rl_zoo3.train --algo A --env E --seed $seed` for each pair, torch's default threads:"
        f" {figure['zoo_wall']:.0f} s wall, {figure['zoo_cpu']:.0f} s CPU (and no table: each run's evaluations"
        " stay in its own folder).",
        f"Wall-time ratio rlrun / Zoo: **{ratio:.3f}**.",
    ]
