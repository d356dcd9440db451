"""Overhead: rlrun against a plain SB3 script training the same thing, and what evaluation costs.

Sides (whole processes, alternating): ``plain`` (benchmarks/speed/plain_sb3.py: make_vec_env, model, learn),
``rlrun off`` (periodic evaluation and snapshots pushed past the budget, a one-episode final evaluation),
``rlrun eval`` (the preset's periodic and final evaluation, no snapshots), ``rlrun snapshots`` (the
preset's snapshots, no periodic evaluation) and ``rlrun defaults`` (everything as configured). Goal:
``rlrun off`` / ``plain`` <= 1.05.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.common import PYTHON, ROOT, median, provenance, run_process, table

CASES = {"gridworld-ppo": ("gridworld", "ppo", 100_000), "pointenv-sac": ("pointenv", "sac", 5_000)}
QUICK = {"gridworld-ppo": 2_048, "pointenv-sac": 300}
OFF = ["eval.every=1000000000", "snapshot.every=1000000000", "eval.final_episodes=1"]
VARIANTS = {
    "rlrun off": OFF,
    "rlrun eval": ["snapshot.every=1000000000"],
    "rlrun snapshots": ["eval.every=1000000000"],
    "rlrun defaults": [],
}
GOAL = 1.05
NOTES = (
    "What rlrun adds is fixed, per process: Hydra's import, plugin scan and composition of the config, the "
    "checks (the rules; the envs and model are built once, for training), run.json and config.yaml, the "
    "TensorBoard writer, the "
    "one-episode final evaluation, saving model.zip; per step, only its callbacks' counter checks. What it "
    "leaves out: torch's validation of every distribution SB3 builds (on in the plain script, torch's default; "
    "rlrun turns it on with `check_nan=true`; results are bit-identical either way). At `--quick` budgets the "
    "fixed part dominates, so those ratios say nothing about the goal."
)


def spec(env: str, algo: str, steps: int) -> dict:
    """The plain script's SPEC from rlrun's composed config, so both sides train the same thing."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    import rlrun  # noqa: F401  (registers the schema and resolvers)

    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"env={env}", f"algo={algo}", f"total_timesteps={steps}"])
    data = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(data, dict)
    e = data["env"]
    return {
        "env_id": e["id"],
        "n_envs": e["n_envs"],
        "env_kwargs": e["kwargs"],
        "max_episode_steps": e["max_episode_steps"],
        "normalize": e["normalize"],
        "seed": data["seed"],
        "torch_threads": data["torch_threads"],
        "total_timesteps": steps,
        "algo": data["algo"],
    }


def commands(case: str, steps: int, work: Path) -> dict[str, list[str]]:
    """Each side's command line."""
    env, algo, _ = CASES[case]
    spec_file = work / f"{case}.json"
    spec_file.write_text(json.dumps(spec(env, algo, steps)))
    base = [PYTHON, "-m", "rlrun", f"env={env}", f"algo={algo}", f"total_timesteps={steps}", "progress_bar=false"]
    sides = {"plain": [PYTHON, "-m", "benchmarks.speed.plain_sb3", str(spec_file)]}
    sides.update({name: base + extra for name, extra in VARIANTS.items()})
    return sides


def run(reps: int, quick: bool) -> str:
    """Measure every case; the Markdown section."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        for case, (_, _, full_steps) in CASES.items():
            steps = QUICK[case] if quick else full_steps
            sides = commands(case, steps, work)
            walls: dict[str, list[float]] = {name: [] for name in sides}
            peaks: dict[str, list[float]] = {name: [] for name in sides}
            cpus: dict[str, list[float]] = {name: [] for name in sides}
            for rep in range(reps):
                for name, cmd in sides.items():
                    run_dir = work / f"{case}-{name.replace(' ', '_')}-{rep}"
                    extra = [f"hydra.run.dir={run_dir}"] if cmd[2] == "rlrun" else []
                    proc = run_process(cmd + extra, work / "logs" / f"{run_dir.name}.log", cwd=ROOT)
                    walls[name].append(proc.wall_s)
                    peaks[name].append(proc.peak_mb)
                    cpus[name].append(proc.cpu_s)
            plain, plain_cpu = median(walls["plain"]), median(cpus["plain"])
            for name in sides:
                wall, cpu = median(walls[name]), median(cpus[name])
                ratio = wall / plain
                verdict = ("met" if ratio <= GOAL else "NOT met") if name == "rlrun off" else ""
                rows.append(
                    [case, f"{steps:,}", name, f"{wall:.2f}", f"{ratio:.3f}", f"{cpu:.2f}", f"{cpu / plain_cpu:.3f}"]
                    + [f"{median(peaks[name]):.0f}", verdict]
                )
    body = [
        "## Overhead: rlrun against a plain SB3 script",
        "",
        "Same env, hyperparameters (the preset), seed, torch threads and steps on both sides. `rlrun off`: periodic "
        "evaluation and snapshots pushed past the budget, a one-episode final evaluation. `rlrun eval` / "
        "`rlrun snapshots`: the preset's evaluation (periodic and the 50-episode final one) or snapshots alone; "
        "their cost is their time minus `rlrun off`'s. Goal: `rlrun off` / `plain` <= 1.05.",
        "",
        table(["case", "steps", "side", "wall s", "ratio", "cpu s", "cpu ratio", "peak MB", "goal (wall)"], rows),
        "",
        NOTES,
        "",
        provenance(f"python -m benchmarks --only overhead{' --quick' if quick else ''} --reps {reps}", reps),
    ]
    if quick:
        body.insert(
            2, "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goals are about).**\n"
        )
    return "\n".join(body)
