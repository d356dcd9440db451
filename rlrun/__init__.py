"""rlrun: a declarative, config-driven RL experiment runner (Hydra + Stable-Baselines3).

Importing the package registers the config schema, the folder-name resolvers and rlrun's sweeper
with Hydra, so ``python -m rlrun``, the console scripts and Hydra's compose API all see the same configs.
"""

from hydra.core.plugins import Plugins

# Hydra's first plugin scan re-runs the modules of its own plugins, and the sweeper subclasses one of them
# (BasicSweeper): scan first, then import the sweeper, so both see the same class.
Plugins.instance()

from hydra_plugins.rlrun_sweeper import rlrun_sweeper as _sweeper  # noqa: E402, F401  (stores hydra/sweeper=rlrun)
from rlrun import resolvers, schema  # noqa: E402

__version__ = "0.1.0"

schema.register()
resolvers.register()


def __getattr__(name: str):  # noqa: ANN202
    """``rlrun.load_run``, imported on first use (it pulls in SB3 and torch)."""
    if name == "load_run":
        from rlrun.eval_cli import load_run

        return load_run
    raise AttributeError(f"module 'rlrun' has no attribute {name!r}")
