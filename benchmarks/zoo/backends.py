"""``algo.backend=jax`` (SBX) beside RL Zoo at one thread: the ``zoo_jax`` section of BENCHMARKS.md.

Each off-policy pair trains at the Zoo's hyperparameters on two sides, whole processes timed: the Zoo at one torch
thread (``python -m rl_zoo3.train --algo A --env E --seed S --num-threads 1``, which trains SB3 on torch) and rlrun
with ``algo.backend=jax`` as it runs by default (one torch and one XLA thread, its evaluations and snapshots). The
Zoo is asked for one evaluation at the end (``--eval-freq <budget> --eval-episodes <rlrun's final episodes>``) so
that its final return stands beside rlrun's: the torch runs' interval beside jax's, over the same seeds. Two
processes run at a time, one per core, the sides alternating in the queue; each run is kept in
``benchmarks/results/zoo/jax.json`` as it ends, so an invocation that stops continues where it stopped and the
section is written from every kept run.

The user-level figure (``--user-level``): the user-level figure of the ``zoo`` section with ``backend=jax`` where
the pairs allow (``cartpole_dqn``: SBX has no A2C, and its PPO gains nothing), both sides measured again in the same
invocation.

    python -m benchmarks.zoo.backends [--pairs NAME...] [--seeds 10] [--jobs 2] [--user-level] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.common import (
    PYTHON,
    RESULTS,
    ZOO_PACKAGES,
    ZOO_PYTHON,
    ensure_zoo,
    machine,
    median,
    run_process,
    table,
    versions,
    write_section,
)
from benchmarks.zoo import pairs
from rlrun.config.budget import final_episodes
from rlrun.table.stats import iqm, iqm_interval

KEPT = RESULTS / "zoo" / "jax.json"  # every run, pair by pair
USER_LEVEL_KEPT = RESULTS / "zoo" / "user_level_jax.json"
SIDES = ("zoo 1 thread", "rlrun jax")
# The off-policy pairs SBX takes. HalfCheetah runs a fraction of the Zoo's 1M steps, the Zoo on HalfCheetah-v4 (its
# hyperparameters' entry) and rlrun on v5 (the same model; rlrun's env config).
PAIRS = {
    "pendulum_sac": (pairs.PAIRS["pendulum_sac"], 20_000),
    "pendulum_tqc": (pairs.Pair("pendulum_tqc", "pendulum", "tqc", "tqc", "Pendulum-v1", 20_000, 300), 20_000),
    "cartpole_dqn": (pairs.PAIRS["cartpole_dqn"], 50_000),
    "halfcheetah_sac": (
        pairs.Pair("halfcheetah_sac", "halfcheetah", "sac", "sac", "HalfCheetah-v4", 10**6, 300),
        20_000,
    ),
}
# Pairs whose rlrun side evaluates once at the end (eval.every=<steps>), as the Zoo side does, so that both do the
# same evaluation work: at 20,000 HalfCheetah steps rlrun's default (every tenth of the budget, 5 episodes of 1,000
# steps) steps its eval env 55,000 times beside 20,000 training steps.
EVALUATE_AT_THE_END = {"halfcheetah_sac"}
GOAL = 0.5  # jax's wall time over the Zoo's at one thread
USER_LEVEL_GOAL = 0.25
# The user-level sweep: the zoo section's three pairs, cartpole_dqn on jax (conf/benchmark/zoo_pair/cartpole_dqn_jax)
USER_LEVEL_JAX = ("cartpole_ppo", "cartpole_dqn_jax", "lunarlander_a2c")
MEMORY_GB = 24
PACKAGES = ("sbx-rl", "jax", "flax", "stable-baselines3", "torch", "gymnasium")


def commands(name: str, side: str, steps: int, seed: int, folder: Path) -> list[str]:
    """The command of one run of ``name`` on ``side``, writing into ``folder``."""
    pair, _ = PAIRS[name]
    if side == "zoo 1 thread":
        zoo = [str(ZOO_PYTHON), *pair.zoo(), "-n", str(steps), "--seed", str(seed), "--num-threads", "1"]
        evaluation = ["--eval-freq", str(steps), "--eval-episodes", str(final_episodes(steps))]
        return [*zoo, *evaluation, "-f", str(folder)]
    rlrun = [PYTHON, "-m", "rlrun", *pair.rlrun(), "algo.backend=jax", f"total_timesteps={steps}", f"seed={seed}"]
    if name in EVALUATE_AT_THE_END:
        rlrun.append(f"eval.every={steps}")
    return [*rlrun, "progress_bar=false", f"hydra.run.dir={folder}"]


def final_return(side: str, folder: Path) -> float:
    """The run's final mean return: rlrun's ``final`` in run.json; the Zoo's last evaluation (evaluations.npz)."""
    if side == "rlrun jax":
        return float(json.loads((folder / "run.json").read_text())["final"]["mean_return"])
    found = sorted(folder.rglob("evaluations.npz"))
    if not found:
        raise RuntimeError(f"the Zoo's run in {folder} wrote no evaluations.npz")
    return float(np.load(found[0])["results"][-1].mean())


def training_s(side: str, folder: Path) -> float | None:
    """rlrun's training time (run.json's wall_s: from the first step to the end, JAX's compilation included)."""
    if side != "rlrun jax":
        return None
    return float(json.loads((folder / "run.json").read_text())["wall_s"])


class Kept:
    """The kept runs (``KEPT``), written as each run ends; a pair measured at other steps starts over."""

    def __init__(self, path: Path = KEPT, measured_on: str = "") -> None:
        self.path = path
        self.measured_on = measured_on  # the machine line kept with a pair when its first run ends
        self.runs: dict[str, dict] = json.loads(path.read_text()) if path.exists() else {}
        self.lock = threading.Lock()

    def has(self, name: str, steps: int, side: str, seed: int) -> bool:
        entry = self.runs.get(name)
        return bool(entry and entry["steps"] == steps and str(seed) in entry["sides"].get(side, {}))

    def add(self, name: str, steps: int, side: str, seed: int, run: dict) -> None:
        with self.lock:
            entry = self.runs.get(name)
            if not entry or entry["steps"] != steps:
                entry = self.runs[name] = {"steps": steps, "sides": {}, "machine": self.measured_on}
            entry["sides"].setdefault(side, {})[str(seed)] = run
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.runs, indent=1, sort_keys=True) + "\n")


def measure(names: list[str], seeds: int, jobs: int, work: Path, kept: Kept, quick: bool) -> None:
    """Every seed of ``names`` on both sides, ``jobs`` processes at a time, the sides alternating in the queue."""
    queue = []
    for name in names:
        steps = PAIRS[name][0].quick if quick else PAIRS[name][1]
        for seed in range(seeds):
            for side in SIDES if seed % 2 == 0 else SIDES[::-1]:
                if quick or not kept.has(name, steps, side, seed):
                    queue.append((name, steps, side, seed))

    def one(name: str, steps: int, side: str, seed: int) -> None:
        folder = work / f"{name}-{side.replace(' ', '_')}-{seed}"
        proc = run_process(commands(name, side, steps, seed, folder), work / "logs" / f"{folder.name}.log", cwd=work)
        run = {
            "wall": round(proc.wall_s, 3),
            "cpu": round(proc.cpu_s, 3),
            "peak": round(proc.peak_mb, 1),
            "return": round(final_return(side, folder), 3),
            "training": training_s(side, folder),
            "date": datetime.date.today().isoformat(),
        }
        print(f"{name} {side} seed {seed}: {run}", flush=True)
        if not quick:
            kept.add(name, steps, side, seed, run)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in [pool.submit(one, *job) for job in queue]:
            future.result()


def _returns(runs: dict[str, dict]) -> str:
    scores = [run["return"] for run in runs.values()]
    low, high = iqm_interval(scores)
    interval = "" if low is None or high is None else f" [{low:.1f}, {high:.1f}]"
    return f"{iqm(np.asarray(scores)):.1f}{interval}"


def rows(kept: dict[str, dict]) -> list[list[str]]:
    """One row per kept pair: medians of each side, jax / Zoo with its goal, memory, returns, what limits it."""
    body = []
    for name, (pair, _) in PAIRS.items():
        if name not in kept or not all(kept[name]["sides"].get(side) for side in SIDES):
            continue
        steps, sides = kept[name]["steps"], kept[name]["sides"]
        zoo, jax = sides["zoo 1 thread"].values(), sides["rlrun jax"].values()
        zoo_wall, jax_wall = median([r["wall"] for r in zoo]), median([r["wall"] for r in jax])
        ratio = jax_wall / zoo_wall
        cpu = median([r["cpu"] for r in jax]) / median([r["cpu"] for r in zoo])
        training = median([r["training"] for r in jax])
        peaks = median([r["peak"] for r in zoo]), median([r["peak"] for r in jax])
        fit = " / ".join(str(int(MEMORY_GB * 1024 // peak)) for peak in peaks)
        verdict = "met" if ratio <= GOAL else "NOT met"
        limit = f"training {training / zoo_wall:.2f} of the Zoo's run; the rest {jax_wall - training:.1f} s"
        budget = f"{steps:,}" if steps == pair.steps else f"{steps:,} of {pair.steps:,}"
        body.append(
            [
                f"`{name}`",
                budget,
                str(min(len(zoo), len(jax))),
                f"{zoo_wall:.1f}",
                f"{jax_wall:.1f}",
                f"{ratio:.3f} <= {GOAL}: {verdict}",
                f"{cpu:.3f}",
                limit,
                f"{peaks[0]:.0f} / {peaks[1]:.0f}",
                fit,
                _returns(sides["zoo 1 thread"]),
                _returns(sides["rlrun jax"]),
                max(r["date"] for r in [*zoo, *jax]),
            ]
        )
    return body


HEADER = [
    "pair",
    "steps",
    "seeds",
    "zoo 1 thread s",
    "rlrun jax s",
    "jax / zoo wall",
    "jax / zoo CPU",
    "jax: training, and the rest (start-up, evaluation)",
    "peak MB zoo / jax",
    f"jobs in {MEMORY_GB} GiB zoo / jax",
    "zoo (torch) final return IQM [95% CI]",
    "rlrun jax final return IQM [95% CI]",
    "measured",
]


def user_level_lines(figure: dict) -> list[str]:
    ratio = figure["rlrun_wall"] / figure["zoo_wall"]
    verdict = "met" if ratio <= USER_LEVEL_GOAL else "NOT met"
    return [
        f"**User level with jax** ({figure['date']}): the {figure['seeds']}-seed results of"
        f" {', '.join(f'`{n}`' for n in pairs.USER_LEVEL)} at the Zoo's budgets, `cartpole_dqn` on jax (SBX has no A2C"
        " and its PPO gains nothing: the pairs allow no more).",
        f"rlrun, one command: `rlrun -m +benchmark/zoo_pair={','.join(figure['rlrun_pairs'])}"
        f" 'seed=range(0,{figure['seeds']})' hydra/launcher=joblib hydra.launcher.n_jobs=2`:"
        f" {figure['rlrun_wall']:.0f} s wall.",
        f"The Zoo seed after seed, as the `zoo` section runs it, in the same invocation: {figure['zoo_wall']:.0f} s"
        f" wall, {figure['zoo_cpu']:.0f} s CPU.",
        f"Wall-time ratio rlrun / Zoo: **{ratio:.3f}** <= {USER_LEVEL_GOAL}: {verdict}.",
        "Per pair, the seconds its runs took added up (rlrun: its jobs' run.json `wall_s`, two at a time; the Zoo:"
        " its whole processes, one at a time): "
        + "; ".join(
            f"`{name}` rlrun {rlrun:.0f} s, the Zoo {figure['zoo_pair_s'][name.removesuffix('_jax')]:.0f} s"
            for name, rlrun in figure["rlrun_pair_s"].items()
        )
        + ".",
    ]


def commands_run(kept: dict[str, dict]) -> str:
    """The invocations that measured the kept rows, one per pair with its seeds, then the one that wrote them."""
    seeds = {name: min(len(side) for side in kept[name]["sides"].values()) for name in PAIRS if kept.get(name)}
    measured = [f"`python -m benchmarks.zoo.backends --pairs {name} --seeds {n}`" for name, n in seeds.items()]
    return ", ".join([*measured, "`python -m benchmarks.zoo.backends --pairs PAIR... --user-level --write`"])


def section(kept: dict[str, dict], figure: dict | None) -> str:
    """The section: the kept pairs' rows, the user-level figure, how and where they were measured."""
    body = rows(kept)
    measured_on = "; ".join(sorted({entry["machine"] for entry in kept.values()})) or machine()
    return "\n".join(
        [
            "### `algo.backend=jax` beside the Zoo at one thread",
            "",
            "The Zoo's hyperparameters on both sides: the Zoo at one torch thread (`python -m rl_zoo3.train --algo A"
            " --env E --seed S --num-threads 1`, SB3 on torch, with one evaluation at the end, `--eval-freq <steps>"
            " --eval-episodes <rlrun's final episodes>`, for its final return) and rlrun with `algo.backend=jax`"
            " as it runs by default (SBX; one torch and one XLA thread; its evaluations every tenth of the budget"
            " and its snapshots). Whole processes, two at a time (one per core), the sides alternating in the"
            f" queue; medians over each row's seeds (0 and up). Goal: jax's wall time <= {GOAL} of the Zoo's at one"
            " thread. `training`: rlrun's run.json `wall_s` (from the first step, JAX's compilation included)"
            " over the Zoo's whole run; `the rest`: the process's other seconds (imports, start-up, the final"
            " evaluation). Jobs in 24 GiB: how many such processes fit by peak memory. HalfCheetah: the first"
            " 20,000 steps of the Zoo's 1M (10,000 of them gradient steps after its `learning_starts`), the Zoo"
            " on HalfCheetah-v4 (its hyperparameters' entry), rlrun on v5 with one evaluation at the end"
            " (`eval.every=20000`), as the Zoo side, so that both do the same evaluation work (rlrun's default at"
            " that budget, every 2,000 steps on 5 episodes of 1,000 steps, steps the eval env 55,000 times).",
            "",
            table(HEADER, body) if body else "No pair measured yet.",
            "",
            *(user_level_lines(figure) if figure else ["User level with jax: not measured yet."]),
            "",
            "Each run is kept in `benchmarks/results/zoo/jax.json` as it ends; an invocation continues where the"
            " last one stopped and the table is written from every kept run.",
            f"Commands: {commands_run(kept)}; whole processes timed.",
            f"Machine: {measured_on}.",
            f"Versions: {versions(packages=PACKAGES)}. The Zoo's: {versions(str(ZOO_PYTHON), ZOO_PACKAGES)}.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="+", choices=list(PAIRS), default=list(PAIRS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time (default 2: one per core here)")
    parser.add_argument("--user-level", action="store_true", help="also the user-level figure with jax")
    parser.add_argument("--write", action="store_true", help="write the zoo_jax section of BENCHMARKS.md")
    parser.add_argument("--quick", action="store_true", help="tiny budgets, 1 seed, printed only, nothing kept")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.write = 1, False
    ensure_zoo()
    kept = Kept(measured_on=machine())
    with tempfile.TemporaryDirectory(prefix="zoo-jax-") as folder:
        work = Path(folder)
        measure(args.pairs, args.seeds, args.jobs, work, kept, args.quick)
        figure = json.loads(USER_LEVEL_KEPT.read_text()) if USER_LEVEL_KEPT.exists() else None
        if args.user_level:
            figure = pairs.user_level(work, args.quick, sweep_pairs=USER_LEVEL_JAX)
            if not args.quick:
                USER_LEVEL_KEPT.write_text(json.dumps(figure, indent=1, sort_keys=True) + "\n")
    text = section(kept.runs, figure)
    print(text)
    if args.write:
        write_section("zoo_jax", text)


if __name__ == "__main__":
    main()
