"""What rlrun's answers to mistakes cost, before and after issue 49, and a tuning trial whose seeds start fresh or
forked from the preloaded process.

``python -m benchmarks.speed.answers [--reps 5] [--before 60233d3] [--write]`` measures, in one invocation:

1. each mistake of :data:`ANSWERS`, and ``rlrun --cfg job`` as a reference, run to rlrun's answer by the code at
   commit ``--before`` (a ``git worktree`` of it, first on ``PYTHONPATH``, in the same virtualenv) and by this
   checkout, side by side;
2. one ``rlrun-tune`` trial of 4 seeds (GridWorld PPO, tiny budgets, a search space of one value, so that every
   repetition trains the same) with its seeds started as fresh ``python -m rlrun`` processes
   (``_RLRUN_FAST_START_SKIP=preload``) and forked from the preloaded process (the default), side by side.

Figures are CPU seconds (user + system of the whole process, its children included: ``wait4``'s rusage, the
steadier figure on a shared machine) and wall seconds, medians of ``--reps`` repetitions after a round that is not
counted, the sides alternating so that machine noise hits them alike. ``--write`` puts the tables into BENCHMARKS.md
(section ``answers``). Goal (issue 49): each answer at most 0.6 CPU-s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks import common

BEFORE = "60233d3"  # the last commit before issue 49's work
GOAL_CPU_S = 0.6
NOT_A_RUN = "{not_a_run}"  # stands for a folder that exists and is not a run
# The mistakes, as a user types them -> the module and arguments run (`python -m MODULE ARGS`).
ANSWERS: dict[str, list[str]] = {
    "rlrun algo.learning_rat=0.1": ["rlrun", "algo.learning_rat=0.1"],
    "rlrun env=cartpol": ["rlrun", "env=cartpol"],
    "rlrun-tune env=gridworld algo=ppo tune.pruner=asha": [
        "rlrun.cli.tune",
        "env=gridworld",
        "algo=ppo",
        "tune.pruner=asha",
    ],  # fmt: skip
    "rlrun resume=<a folder that is not a run>": ["rlrun", f"resume={NOT_A_RUN}"],
    "rlrun-check wrappers=[flaten]": ["rlrun.cli.check", "wrappers=[flaten]"],
}
REFERENCE = ("rlrun --cfg job", ["rlrun", "--cfg", "job"])  # composes and prints a config: no mistake, no torch
ANSWER_STATUS = 2
# One trial of 4 seeds: tiny budgets, a search space of one value.
TRIAL_SEEDS = 4
SPACE = "# one value: every trial trains the same\nalgo.learning_rate: {type: categorical, choices: [0.0003]}\n"
TRIAL = [
    "search_space=one_value", "env=gridworld", "algo=ppo", "total_timesteps=512", "eval.every=256",
    "eval.episodes=2", "eval.final_episodes=2", "eval.n_envs=2", "snapshot.every=512", "env.n_envs=1",
    "algo.n_steps=128", "algo.batch_size=64", "algo.n_epochs=2", f"tune.seeds={TRIAL_SEEDS}", "tune.trials=1",
    "tune.validate_seeds=0", "tune.study=trial",
]  # fmt: skip
SWITCH, SKIP = "RLRUN_FAST_START", "_RLRUN_FAST_START_SKIP"
STARTS = {"fresh": {SKIP: "preload"}, "preloaded": {}}  # the seeds' start -> environment variables


@contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A ``git worktree`` of ``commit``, removed afterwards. Its ``rlrun/conf`` and ``rlrun/envs`` are links to its
    ``conf/`` and ``envs/``, as the package maps them: this virtualenv's editable install would otherwise find
    them in this checkout."""
    with tempfile.TemporaryDirectory(prefix="rlrun-before-") as scratch:
        tree = Path(scratch) / "tree"
        git = ["git", "-C", str(common.ROOT)]
        subprocess.run([*git, "worktree", "add", "--detach", str(tree), commit], check=True, capture_output=True)
        try:
            for name in ("conf", "envs"):
                (tree / "rlrun" / name).symlink_to(tree / name, target_is_directory=True)
            yield tree
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False, capture_output=True)


def environment(code: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with ``code`` first on PYTHONPATH and no start-up switch of the caller's."""
    env = {k: v for k, v in os.environ.items() if k not in (SWITCH, SKIP, "HYDRA_FULL_ERROR")}
    return {**env, "PYTHONPATH": str(code), **(extra or {})}


def check_imported_from(code: Path, cwd: Path) -> None:
    """Raise unless ``rlrun``, its configs and its envs are imported from ``code`` under :func:`environment`, in
    ``cwd`` (the commands' own working folders are temporary: none holds a package)."""
    probe = "import os, rlrun, rlrun.conf, rlrun.envs\n"
    probe += "for m in (rlrun, rlrun.conf, rlrun.envs): print(os.path.realpath(m.__file__))"
    out = subprocess.run([common.PYTHON, "-c", probe], env=environment(code), capture_output=True, text=True, cwd=cwd)
    places = out.stdout.split()
    if out.returncode != 0 or len(places) != 3 or not all(p.startswith(str(code.resolve())) for p in places):
        raise RuntimeError(f"rlrun is not imported from {code}: {out.stdout}{out.stderr}")


def time_answers(sides: dict[str, Path], reps: int, work: Path) -> dict[tuple[str, str], list[common.Proc]]:
    """Each command of :data:`ANSWERS` and the reference, on each side, ``reps`` times after a round not counted."""
    commands = {**ANSWERS, REFERENCE[0]: REFERENCE[1]}
    results: dict[tuple[str, str], list[common.Proc]] = {(c, s): [] for c in commands for s in sides}
    for rep in range(-1, reps):
        for n, (label, args) in enumerate(commands.items()):
            for side, code in sides.items():
                folder = work / f"{side}-{n}-{rep + 1}"
                (folder / "not_a_run").mkdir(parents=True)
                (folder / "not_a_run" / "notes.txt").write_text("not a run\n")
                argv = [a.replace(NOT_A_RUN, str(folder / "not_a_run")) for a in args]
                proc = common.run_process(
                    [common.PYTHON, "-m", *argv], folder / "log.txt", cwd=folder, env=environment(code), check=False
                )
                if rep >= 0:
                    results[(label, side)].append(proc)
                print(f"  {side:>6} {label}: CPU {proc.cpu_s:5.2f} s, exit {proc.returncode}", file=sys.stderr)
    return results


def time_trials(reps: int, work: Path) -> dict[str, list[common.Proc]]:
    """The 4-seed trial with each start of the seeds (:data:`STARTS`), ``reps`` times after a round not counted;
    every seed checked completed."""
    conf = work / "conf"
    (conf / "search_space").mkdir(parents=True)
    (conf / "search_space" / "one_value.yaml").write_text(SPACE)
    results: dict[str, list[common.Proc]] = {start: [] for start in STARTS}
    for rep in range(-1, reps):
        for start, extra in STARTS.items():
            folder = work / f"{start}-{rep + 1}"
            folder.mkdir(parents=True)
            command = [common.PYTHON, "-m", "rlrun.cli.tune", f"--config-dir={conf}", *TRIAL]
            proc = common.run_process(command, folder / "log.txt", cwd=folder, env=environment(common.ROOT, extra))
            seeds = folder / "outputs" / "tune" / "trial" / "trials" / "0"
            statuses = [
                json.loads((seeds / f"seed-{k}" / "run.json").read_text())["status"] for k in range(TRIAL_SEEDS)
            ]
            if statuses != ["completed"] * TRIAL_SEEDS:
                raise RuntimeError(f"{start} trial: seeds ended {statuses} (see {folder})")
            if rep >= 0:
                results[start].append(proc)
            print(f"  {start:>9} trial: wall {proc.wall_s:5.2f} s, CPU {proc.cpu_s:5.2f} s", file=sys.stderr)
    return results


def answers_table(results: dict[tuple[str, str], list[common.Proc]]) -> str:
    """Medians before and after, their ratio, the exit statuses, the goal."""
    lines = [
        "| command | before CPU s | after CPU s | after / before | after / `--cfg job` | exit before, after | goal |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    reference = common.median([p.cpu_s for p in results[(REFERENCE[0], "after")]])
    for label in [*ANSWERS, REFERENCE[0]]:
        before, after = (results[(label, side)] for side in ("before", "after"))
        cpu_before, cpu_after = (common.median([p.cpu_s for p in runs]) for runs in (before, after))
        statuses = ", ".join("/".join(sorted({str(p.returncode) for p in runs})) for runs in (before, after))
        goal = "(reference)" if label == REFERENCE[0] else ("met" if cpu_after <= GOAL_CPU_S else "NOT met")
        lines.append(
            f"| `{label}` | {cpu_before:.2f} | {cpu_after:.2f} | {cpu_after / cpu_before:.2f} | "
            f"{cpu_after / reference:.2f} | {statuses} | {goal} |"
        )
    return "\n".join(lines)


def trials_table(results: dict[str, list[common.Proc]]) -> str:
    """Medians per start of the seeds, and what fresh seeds cost against preloaded ones round by round."""
    lines = [
        "| seeds started | CPU s | wall s | fresh / preloaded (CPU) | fresh - preloaded, CPU s per seed |",
        "|---|---:|---:|---:|---:|",
    ]
    fresh, preloaded = results["fresh"], results["preloaded"]
    ratios = [f.cpu_s / p.cpu_s for f, p in zip(fresh, preloaded, strict=True)]
    per_seed = [(f.cpu_s - p.cpu_s) / TRIAL_SEEDS for f, p in zip(fresh, preloaded, strict=True)]
    for start, runs in results.items():
        cost = f"{common.median(ratios):.2f} | {common.median(per_seed):+.2f}" if start == "fresh" else "1.00 | +0.00"
        lines.append(
            f"| {start} | {common.median([p.cpu_s for p in runs]):.2f} | {common.median([p.wall_s for p in runs]):.2f} "
            f"| {cost} |"
        )
    return "\n".join(lines)


def section(command: str, before: str, text: str) -> str:
    """The ``answers`` section of BENCHMARKS.md: what is measured, the goal, then the command's output."""
    return "\n".join(
        [
            "## Answers to mistakes, and a tuning trial's seeds",
            "",
            f"Goal (issue 49): rlrun answers each mistake below, exit status {ANSWER_STATUS}, in at most {GOAL_CPU_S}"
            " CPU-s, before torch, SB3, JAX or Optuna are imported; `rlrun --cfg job` (compose and print a config) is"
            " the reference. Before: the code at commit"
            f" {before}, the last before issue 49's work (a `git worktree` of it first on `PYTHONPATH`, the same"
            " virtualenv); after: this checkout. Then one `rlrun-tune` trial of 4 seeds (GridWorld PPO, 512 steps"
            " each, a search space of one value) with its seeds started as fresh `python -m rlrun` processes and"
            " forked from the preloaded process (`rlrun/tune/forked_seeds.py`, the default). CPU seconds are user +"
            " system of the whole process, its children included (`wait4`); both tables' ratios come from the same"
            " invocation, the sides alternating, so that the load of the shared machine (below) hits them alike."
            f" Output of `{command}`:",
            "",
            "```",
            text,
            "```",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, time both sides, print the tables; ``--write``: also into BENCHMARKS.md."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.answers", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each side (default: 5)")
    parser.add_argument("--before", default=BEFORE, help=f"the commit timed as before (default: {BEFORE})")
    parser.add_argument("--write", action="store_true", help="write the tables into BENCHMARKS.md")
    args = parser.parse_args(argv)
    command = f"python -m benchmarks.speed.answers --reps {args.reps} --before {args.before}"
    lines = [f"Machine: {common.machine()}", f"Versions: {common.versions()}"]
    loads = [os.getloadavg()[0]]
    with worktree(args.before) as tree, tempfile.TemporaryDirectory(prefix="rlrun-answers-") as tmp:
        sides = {"before": tree, "after": common.ROOT}
        for code in sides.values():
            check_imported_from(code, Path(tmp))
        lines.append(
            f"Before: commit {args.before}; after: this checkout (rlrun, its configs and envs checked to be imported"
            " from each)"
        )
        answers = time_answers(sides, args.reps, Path(tmp) / "answers")
        loads.append(os.getloadavg()[0])
        trials = time_trials(args.reps, Path(tmp) / "trials")
        loads.append(os.getloadavg()[0])
    lines += ["", f"Each answer, to its end, {args.reps} alternated repetitions (medians):", ""]
    lines += [answers_table(answers), ""]
    trial = " ".join(TRIAL)
    lines += [f"`rlrun-tune {trial}`, to its end, {args.reps} alternated repetitions (medians):", ""]
    lines += [trials_table(trials), ""]
    lines += [
        f"1-minute load: {loads[0]:.1f} at the start, {loads[1]:.1f} after the answers, {loads[2]:.1f} at the end, on"
        f" {os.cpu_count()} cores (a load above the cores: other work shared them)"
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        common.write_section("answers", section(command, args.before, text))


if __name__ == "__main__":
    main()
