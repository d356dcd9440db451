"""The user's ``--config-dir`` configs win over rlrun's bundled ones, and a run says where its preset came from.

Hydra puts a ``--config-dir`` folder on the search path *after* the primary config path (rlrun's bundled
``conf/``), so a user's ``tuned/pointenv_sac.yaml`` would be shadowed by the bundled file of that name and
silently ignored. Hydra's search path is searched in order, the first match winning; so rlrun hands Hydra the
user's folder as the primary config path (``--config-path``) and its own ``conf/`` as the additional one
(``--config-dir``): the user's files come first, and every config the user's folder lacks is still rlrun's.
A malformed YAML file in the user's folder is a user mistake naming the file and line, found before Hydra runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError

BUNDLED = "rlrun.conf"


def bundled_dir() -> Path:
    """rlrun's own ``conf/`` folder, as installed (the package ``rlrun.conf``)."""
    return Path(str(files(BUNDLED)))


_FLAGS = {"--config-dir": "dir", "-cd": "dir", "--config-path": "path", "-cp": "path"}


def _split(argv: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """Hydra's ``--config-dir``/``--config-path`` flags (``-cd``, ``-cp``; ``FLAG VALUE`` or ``FLAG=VALUE``), and
    the other arguments in their order."""
    flags: dict[str, str | None] = {}
    rest: list[str] = []
    args = iter(argv)
    for arg in args:
        name, equals, value = arg.partition("=")
        if name in _FLAGS:
            flags[_FLAGS[name]] = value if equals else next(args, None)
        else:
            rest.append(arg)
    return flags, rest


def user_configs_first(argv: Sequence[str]) -> list[str]:
    """``argv`` with its ``--config-dir DIR`` (also ``-cd DIR``, ``--config-dir=DIR``) made Hydra's primary config
    path and rlrun's bundled ``conf/`` the additional folder (its YAML files were checked by
    :mod:`rlrun.cli.mistakes`); ``argv`` unchanged without one, or when it also sets ``--config-path`` itself."""
    flags, rest = _split(argv)
    given = flags.get("dir")
    if given is None or "path" in flags:
        return list(argv)
    config_dir = Path(given).absolute()
    if not config_dir.is_dir():
        raise UserError(f"--config-dir {given}: no such folder", "give the folder that holds your configs")
    return [f"--config-path={config_dir}", f"--config-dir={bundled_dir()}", *rest]


def preset_source(sources: Sequence[Any], choice: str | None) -> str | None:
    """The file the ``tuned`` preset ``choice`` was read from, given Hydra's config sources in search order
    (``ConfigLoader.get_sources()``): a file of the user's folders, or None for rlrun's bundled one (or without a
    preset). The start banner names it (:mod:`rlrun.run.banner`)."""
    if choice is None:
        return None
    name = f"tuned/{choice}"
    for source in sources:
        if source.is_config(name):
            return str(Path(source.path) / f"{name}.yaml") if source.scheme() == "file" else None
    return None
