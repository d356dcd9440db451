"""rlrun: a declarative, config-driven RL experiment runner (Hydra + Stable-Baselines3).

Importing the package is light: it imports neither Hydra nor torch, so ``import rlrun.envs`` costs only
Gymnasium and numpy. The code lives in subpackages, one per capability (README, "How the code is laid out").
"""

from __future__ import annotations

from typing import Any

from rlrun.startup.headless import prefer_egl

__version__ = "0.1.0"

prefer_egl()  # MUJOCO_GL=egl on a server without a display, before any MuJoCo env is made (rlrun/startup/headless.py)


def __getattr__(name: str) -> Any:
    """``rlrun.load_run``, imported on first use (it pulls in SB3 and torch)."""
    if name == "load_run":
        from rlrun.playback.loading import load_run

        return load_run
    raise AttributeError(f"module 'rlrun' has no attribute {name!r}")
