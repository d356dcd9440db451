"""Hydra config groups shipped inside the package as ``rlrun.conf`` (see pyproject.toml).

Hydra imports this package before it reads a file of it: that registers the schema and resolvers the
files name (:mod:`rlrun.config.store`).
"""

from rlrun.config.store import register

register()
