"""The share of a run's wall time spent evaluating, per verified preset, with the evaluation it gets by default.

Each preset of the preset benchmark (``conf/benchmark/pair/``: the verified presets) runs once, seed 0, as a user
starts it (``python -m rlrun env=ENV algo=ALGO``: its budget, its own ``eval`` keys and rlrun's budget-relative
defaults for the others), one run at a time; and so does CartPole PPO on SB3's defaults (``~tuned``: the default
budget and every evaluation default). The share is run.json's ``eval_s`` (periodic and final evaluations) over its
``wall_s`` (the whole run). Goal: at most 5%. The figures are kept in ``benchmarks/results/eval_share/runs.json``
as each run ends; ``--pairs`` measures some of the runs again, and the section is written from all kept ones.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from benchmarks.common import PYTHON, RESULTS, ROOT, pair_of, provenance, run_process, table

GOAL = 0.05
PAIRS = sorted(path.stem for path in (ROOT / "conf" / "benchmark" / "pair").glob("*.yaml"))
DEFAULTS = "cartpole_ppo ~tuned"  # CartPole PPO on SB3's defaults: every evaluation default applies
KEPT = RESULTS / "eval_share" / "runs.json"
EVAL_KEYS = ("every", "episodes", "final_episodes", "n_envs")


def _command(name: str, run_dir: Path, quick: bool) -> list[str]:
    preset, _, extra = name.partition(" ")
    env, algo = pair_of(preset)
    cmd = [PYTHON, "-m", "rlrun", f"env={env}", f"algo={algo}", *extra.split(), "seed=0", "progress_bar=false"]
    cmd += ["total_timesteps=2000"] if quick else []
    return [*cmd, f"hydra.run.dir={run_dir}"]


def measure(names: list[str], quick: bool, work: Path) -> dict[str, dict[str, Any]]:
    """One run per name, one at a time; run.json's ``wall_s`` and ``eval_s`` and the evaluation settings, each kept
    as it ends (not in a quick run). Returns the runs measured."""
    results = {}
    for name in names:
        run_dir = work / name.replace(" ", "-").replace("~", "")
        proc = run_process(_command(name, run_dir, quick), work / f"{run_dir.name}.log")
        record = json.loads((run_dir / "run.json").read_text())
        cfg = OmegaConf.load(run_dir / "config.yaml")
        results[name] = {
            "steps": record["timesteps"],
            "wall_s": record["wall_s"],
            "eval_s": record["eval_s"],
            "process_s": round(proc.wall_s, 2),
            "eval": {key: OmegaConf.select(cfg, f"eval.{key}") for key in EVAL_KEYS},
        }
        print(f"  {name}: eval_s {record['eval_s']:.2f} of wall_s {record['wall_s']:.2f}", flush=True)
        if not quick:
            kept = json.loads(KEPT.read_text()) if KEPT.exists() else {}
            KEPT.parent.mkdir(parents=True, exist_ok=True)
            KEPT.write_text(json.dumps({**kept, name: results[name]}, indent=2) + "\n")
    return results


def rows(results: dict[str, dict[str, Any]]) -> list[list[str]]:
    """One table row per run: the settings, the seconds, the share and the goal."""
    out = []
    for name, r in results.items():
        share = r["eval_s"] / r["wall_s"]
        e = r["eval"]
        label = f"`{name}`" if name != DEFAULTS else "`cartpole` `ppo` `~tuned` (SB3's defaults)"
        out.append(
            [
                label,
                f"{r['steps']:,}",
                f"{e['every']:,} / {e['episodes']} / {e['final_episodes']} / {e['n_envs']}",
                f"{r['wall_s']:.1f}",
                f"{r['eval_s']:.2f}",
                f"{share:.1%}",
                "met" if share <= GOAL else "NOT met",
            ]
        )
    return out


def run(quick: bool, names: list[str] | None = None) -> str:
    """Run every preset, or ``names`` (a tiny GridWorld run with ``quick``); the Markdown section, from every kept
    run (from the runs of this invocation with ``quick``)."""
    every = [*PAIRS, DEFAULTS]
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        results = measure(["gridworld_ppo"] if quick else names or every, quick, Path(tmp))
    if not quick:
        kept = json.loads(KEPT.read_text())
        results = {name: kept[name] for name in every if name in kept}
    header = ["run", "steps", "eval every / episodes / final / copies", "wall_s", "eval_s", "share", "goal <= 5%"]
    return "\n".join(
        [
            "## Evaluation's share of a run, per preset",
            "",
            "**Quick run (a tiny budget, to prove the benchmark works).**\n" if quick else "",
            "Each verified preset (those of the preset table) run once, seed 0, as `rlrun env=ENV algo=ALGO` starts it:"
            " its budget, its own `eval` keys, rlrun's budget-relative defaults for the rest (`eval.every` a tenth of"
            " the budget, `eval.final_episodes` 5 per 100k steps, 5 to 50); the last row is CartPole PPO on SB3's"
            " defaults (`~tuned`), where every evaluation default applies. `env=cartpole algo=ppo`, the default"
            " CartPole PPO run, is the `cartpole_ppo` row (the preset applies by itself). Share: run.json's `eval_s`"
            " (periodic and final evaluations) over its `wall_s` (the whole run). Goal: at most 5%.",
            "",
            table(header, rows(results)),
            "",
            provenance(
                f"python -m benchmarks --only eval_share{' --quick' if quick else ''}",
                1,
                how="one run per preset, one at a time (figures in `benchmarks/results/eval_share/runs.json`)",
            ),
        ]
    )
