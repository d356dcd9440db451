"""Final evaluation speed: 50 episodes of a solved CartPole (500 steps each) on 1 and on ``eval.n_envs`` copies.

Trains CartPole-v1 PPO once with RL Zoo's hyperparameters (``conf/benchmark/zoo/cartpole_ppo.yaml``, which
solve it in 100k steps; ``python -m rlrun``, about a minute), then times ``rlrun.run.evaluation.evaluate`` on the
run's model in this process, the copy counts taking turns. Goal: under 1.5 s with the default ``eval.n_envs``.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import PYTHON, ROOT, median, provenance, table, zoo_config

GOAL_S = 1.5
NOTE = (
    "Why 5 copies by default: they divide both `eval.episodes` (5) and every default `eval.final_episodes` (5 per "
    "100k steps of budget, 5 to 50), so no copy steps idly; 50 episodes take 10 rounds of 500 batched steps. "
    "Each batched step is SB3's `predict` (the policy switched to eval mode, a torch distribution built; rlrun "
    "turns off torch's validation of its arguments, see `configure_torch`), the `DummyVecEnv` step (Gymnasium's "
    "wrappers, Monitor, a deep copy of the infos) and `evaluate_policy`'s loop."
)
EPISODES = 50


def run(reps: int, quick: bool) -> str:
    """Train, then measure; the Markdown section."""
    from omegaconf import OmegaConf

    from rlrun.make import models, vec_envs
    from rlrun.run.evaluation import evaluate
    from rlrun.run.training import configure_torch

    steps = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        run_dir = Path(tmp) / "cartpole"
        cmd = [PYTHON, "-m", "rlrun", *zoo_config("cartpole", "ppo"), f"total_timesteps={steps}"]
        cmd += ["eval.final_episodes=1", "eval.every=1000000000", "snapshot.every=1000000000", "progress_bar=false"]
        cmd += [f"hydra.run.dir={run_dir}"]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        cfg = OmegaConf.load(run_dir / "config.yaml")
        default = int(OmegaConf.select(cfg, "eval.n_envs"))
        configure_torch(cfg)  # as a run does
        copies = sorted({1, default, 25})
        loaded = {}
        for n in copies:
            env = vec_envs.make_eval_env(cfg, n_envs=n)
            loaded[n] = (models.load_model(cfg, run_dir / "model.zip", env), env)
        walls: dict[int, list[float]] = {n: [] for n in copies}
        cpus: dict[int, list[float]] = {n: [] for n in copies}
        returns: dict[int, float] = {}
        for _ in range(reps):
            for n in copies:
                started, cpu = time.perf_counter(), time.process_time()
                result = evaluate(*loaded[n], EPISODES)
                walls[n].append(time.perf_counter() - started)
                cpus[n].append(time.process_time() - cpu)
                returns[n] = result.mean_return
    rows = []
    for n in copies:
        goal = f"< {GOAL_S}: {'met' if median(walls[n]) < GOAL_S else 'NOT met'}" if n == default else ""
        label = f"{n} (default)" if n == default else str(n)
        rows.append([label, f"{median(walls[n]):.2f}", f"{median(cpus[n]):.2f}", f"{returns[n]:.1f}", goal])
    return "\n".join(
        [
            "## Evaluation: the final 50 episodes of a solved CartPole",
            "",
            f"CartPole-v1 PPO trained {steps:,} steps with RL Zoo's hyperparameters, then "
            "`rlrun.run.evaluation.evaluate` (SB3's `evaluate_policy` over all copies, one batched forward pass per "
            "step) timed in one process, the copy counts taking turns. CPU seconds are shown too: on a shared "
            "machine they are the steadier figure.",
            "",
            table(["eval copies", "wall s", "cpu s", "mean return", "goal"], rows),
            "",
            NOTE,
            "",
            provenance(
                f"python -m benchmarks --only evaluation{' --quick' if quick else ''} --reps {reps}",
                reps,
                how="the copy counts taking turns in one process",
            ),
        ]
    )
