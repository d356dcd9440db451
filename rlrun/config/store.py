"""Register what rlrun's configs need with Hydra and OmegaConf: the structured schema, the folder-name
resolvers and ``hydra/sweeper=rlrun``'s settings.

Called when ``rlrun.conf`` is imported, which Hydra does before it reads any of its files, so
``python -m rlrun``, the console scripts and Hydra's compose API (``initialize_config_module("rlrun.conf")``)
all see the same configs, while ``import rlrun`` and ``import rlrun.envs`` stay light.
"""

from __future__ import annotations

import functools


@functools.cache
def register() -> None:
    """Store the schema, the ``rlrun.*`` resolvers and the sweeper's settings, once per process (building the
    schema's structured configs costs about 30 ms, and both rlrun.conf and the console entries call this)."""
    from hydra_plugins.rlrun_sweeper import config as _sweeper_config  # noqa: F401  (stores hydra/sweeper=rlrun)
    from rlrun.config import resolvers, schema

    schema.register()
    resolvers.register()
