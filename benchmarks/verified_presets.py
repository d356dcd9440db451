"""The verified presets (conf/tuned/<env>_<algo>.yaml tuned here), the targets each must reach and the seeds it
must reach them for: asserted by tests/rlrun/run/test_presets.py and, on native envs, test_presets_native.py; the
benchmarks that train the presets (benchmarks/speed/fused_adam.py, benchmarks/scores/time_to_solve.py) take them
from here too."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from tools.zoo_readme import is_generated

# preset -> (metric of run.json's "final", threshold it must reach for every seed)
TARGETS: dict[str, tuple[str, float]] = {
    "gridworld_ppo": ("success_rate", 0.9),
    "gridworld_dqn": ("success_rate", 0.9),
    "pointenv_sac": ("success_rate", 0.9),
    "pointenv_td3": ("success_rate", 0.9),
    "pointgoal_her": ("success_rate", 0.9),
    "roomtoy_dqn": ("success_rate", 0.9),
    "roomtoy_ppo": ("success_rate", 0.9),
    "cartpole_ppo": ("mean_return", 475.0),  # CartPole-v1's reward threshold
    "pendulum_sac": ("mean_return", -200.0),
    "fetchreach_her": ("success_rate", 0.9),
    "acrobot_ppo": ("mean_return", -100.0),  # Acrobot-v1's reward threshold
    "minigrid_empty_5x5_ppo": ("mean_return", 0.9),  # env.threshold of conf/env/minigrid_empty_5x5.yaml
    "invertedpendulum_sac": ("mean_return", 950.0),  # InvertedPendulum-v5's reward threshold
}
SEEDS = (0, 1, 2, 3, 4)

CONF = Path(str(files("rlrun.conf")))
# verified by the slow tests; RL Zoo's presets converted by tools/zoo_presets.py are the Zoo's values, not re-verified
PRESETS = sorted(path.stem for path in (CONF / "tuned").glob("*.yaml") if not is_generated(path))


def split(preset: str) -> tuple[str, str]:
    """``pointenv_sac`` -> ``("pointenv", "sac")``, ``minigrid_empty_5x5_ppo`` -> ``("minigrid_empty_5x5", "ppo")``:
    the env and algo configs whose names make the preset's (both may hold underscores)."""
    for algo in sorted((p.stem for p in (CONF / "algo").glob("*.yaml")), key=len, reverse=True):
        env = preset.removesuffix(f"_{algo}")
        if env != preset and (CONF / "env" / f"{env}.yaml").is_file():
            return env, algo
    raise AssertionError(f"{preset}: no conf/env/<env>.yaml and conf/algo/<algo>.yaml make this name")
