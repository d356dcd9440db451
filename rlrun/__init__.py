"""rlrun: a declarative, config-driven RL experiment runner (Hydra + Stable-Baselines3).

Importing the package registers the config schema and the folder-name resolvers with Hydra, so
``python -m rlrun``, the console scripts and Hydra's compose API all see the same configs.
"""

from rlrun import resolvers, schema

__version__ = "0.1.0"

schema.register()
resolvers.register()


def __getattr__(name: str):  # noqa: ANN202
    """``rlrun.load_run``, imported on first use (it pulls in SB3 and torch)."""
    if name == "load_run":
        from rlrun.eval_cli import load_run

        return load_run
    raise AttributeError(f"module 'rlrun' has no attribute {name!r}")
