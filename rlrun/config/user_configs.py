"""The user's ``--config-dir`` configs win over rlrun's bundled ones, and a run says where its preset came from.

Hydra puts a ``--config-dir`` folder on the search path *after* the primary config path (rlrun's bundled
``conf/``), so a user's ``tuned/pointenv_sac.yaml`` would be shadowed by the bundled file of that name and
silently ignored. Hydra's search path is searched in order, the first match winning; so rlrun registers a
``SearchPathPlugin`` (Hydra's public hook for this) that puts the user's folder before rlrun's own ``conf/``. Hydra
applies it wherever it builds a search path, in its own entry and in its compose API alike, so the composition
rlrun checks the command line with (:mod:`rlrun.cli.composition`) reads the same files the run will.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar

from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
from hydra.core.plugins import Plugins
from hydra.plugins.search_path_plugin import SearchPathPlugin

from rlrun.config.errors import UserError

BUNDLED = "rlrun.conf"


def bundled_dir() -> Path:
    """rlrun's own ``conf/`` folder, as installed (the package ``rlrun.conf``)."""
    return Path(str(files(BUNDLED)))


class UserConfigsFirst(SearchPathPlugin):
    """Puts the user's ``--config-dir`` folder before rlrun's ``conf/`` on Hydra's search path. Hydra makes its
    plugins without arguments, so the folder is the class's (:func:`put_first` sets it, once per command)."""

    folder: ClassVar[Path | None] = None

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        if self.folder is not None:
            search_path.prepend("rlrun-user", f"file://{self.folder}", anchor=SearchPathQuery(provider="main"))


def put_first(config_dir: str | None) -> None:
    """Search ``config_dir`` (``--config-dir``) before rlrun's configs from now on in this process (Hydra's entry
    runs next)."""
    folder = None if config_dir is None else Path(config_dir).absolute()
    if folder is not None and not folder.is_dir():
        raise UserError(f"--config-dir {config_dir}: no such folder", "give the folder that holds your configs")
    UserConfigsFirst.folder = folder
    Plugins.instance().register(UserConfigsFirst)


@contextmanager
def searched_first(config_dir: str | None) -> Iterator[None]:
    """:func:`put_first` inside the block only: a composition that checks a command line leaves the search path of
    whatever this process composes afterwards as it was."""
    before = UserConfigsFirst.folder
    try:
        put_first(config_dir)
        yield
    finally:
        UserConfigsFirst.folder = before


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
