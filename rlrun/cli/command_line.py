"""The command line, read once (:class:`CommandLine`), and the checks of it made before Hydra runs, for what
Hydra would report badly or too late.

- A misspelt wrapper: Hydra fails while composing with "Could not load 'wrappers/flaten'" and, unlike
  for ``env=`` and ``algo=``, lists nothing. Here it gets the wrappers that exist (listed by Hydra's own
  config loader, so the user's ``--config-dir`` and ``hydra.searchpath`` count) and the closest name.
  (Other options, keys and types: :mod:`rlrun.cli.mistakes`.)
- An output folder that cannot be written (``hydra.run.dir`` or ``hydra.sweep.dir``): Hydra would fail
  with a traceback while creating it. Here it is a user mistake, found before anything is created.
- A launcher whose extra is not installed (``hydra/launcher=ray`` without Ray, ``slurm`` without submitit):
  Hydra would fail with ``No module named 'ray'`` after creating the sweep folder, or with "Could not load
  'hydra/launcher/submitit_slurm'". Here it names ``pip install "rlrun[<extra>]"`` before anything is created.

Both only complain when they are sure; anything they cannot decide is left to Hydra.
"""

from __future__ import annotations

import argparse
import difflib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml
from hydra import initialize_config_dir, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

from rlrun.config.errors import UserError
from rlrun.config.keys import override_key
from rlrun.make import families

CONFIG_MODULE = "rlrun.conf"
OUTPUT_KEYS = ("hydra.run.dir", "hydra.sweep.dir")
# hydra/launcher options -> the extra of rlrun that installs what they need
LAUNCHER_EXTRAS = {"ray": "ray", "slurm": "slurm", "submitit_slurm": "slurm", "submitit_local": "slurm"}


class UnknownOption(UserError):
    """A config group option that does not exist: a user mistake rlrun answers itself (exit status 2)."""


@dataclass(frozen=True)
class CommandLine:
    """A command line of ``rlrun`` or ``rlrun-check``, read once: Hydra's flags that change where configs are
    found, and the overrides (``key=value`` arguments), also as Hydra's parser reads them (``parsed``)."""

    argv: tuple[str, ...]  # everything after the program's name, as typed (or as rlrun rewrote it)
    config_dir: str | None
    config_name: str | None
    overrides: tuple[str, ...]
    parsed: tuple[Override, ...] = ()  # the overrides as Hydra's grammar reads them; () when they do not parse
    syntax_error: str | None = None  # what Hydra's grammar says about them, when they do not parse
    multirun: bool = False  # -m / --multirun

    @classmethod
    def parse(cls, argv: Sequence[str]) -> CommandLine:
        """Split ``argv`` (without the program's name)."""
        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--config-dir", "-cd")
        parser.add_argument("--config-name", "-cn")
        parser.add_argument("--multirun", "-m", action="store_true")
        for flag, short in (("--cfg", "-c"), ("--package", "-p"), ("--config-path", "-cp")):  # Hydra's, with a value
            parser.add_argument(flag, short)
        parser.add_argument("--info", "-i", nargs="?", const="all")
        parser.add_argument("--experimental-rerun")
        flags, rest = parser.parse_known_args(list(argv))
        overrides = tuple(arg for arg in rest if not arg.startswith("-"))
        try:
            parsed, error = tuple(OverridesParser.create().parse_overrides(list(overrides))), None
        except HydraException as problem:
            parsed, error = (), str(problem).splitlines()[0]
        return cls(tuple(argv), flags.config_dir, flags.config_name, overrides, parsed, error, flags.multirun)

    def value(self, key: str) -> str | None:
        """The value the first override of ``key`` gives it (``+key=`` too), or None."""
        return next((o.split("=", 1)[1] for o in self.overrides if "=" in o and override_key(o) == key), None)

    def rewritten(self, changes: dict[str, str]) -> CommandLine:
        """The same command line with some overrides replaced (old text -> new text), parsed again."""
        return CommandLine.parse([changes.get(arg, arg) for arg in self.argv])


def _command(argv: CommandLine | Sequence[str]) -> CommandLine:
    return argv if isinstance(argv, CommandLine) else CommandLine.parse(argv)


def strings(value: object) -> Iterator[str]:
    """Every string in a parsed override value: a list, a sweep of lists, nested lists (a number or a boolean
    as it was written: a group option named ``3``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (bool, int, float)):
        yield str(value).lower() if isinstance(value, bool) else str(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)
    elif hasattr(value, "list"):  # ChoiceSweep, GlobSweep and the like
        yield from strings(value.list)


def wrapper_names(overrides: list[str]) -> list[str]:
    """The wrapper names chosen by ``wrappers=[...]`` overrides (also ``+wrappers=``, sweeps of lists)."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return []  # Hydra reports its own syntax errors
    names: list[str] = []
    for override in parsed:
        if override.key_or_group == "wrappers" and not override.is_delete():
            names += strings(override.value())
    return list(dict.fromkeys(names))


def _sources(config_dir: str | None) -> list[Callable[[], AbstractContextManager[object]]]:
    """Hydra's initialisers for rlrun's configs and the user's ``--config-dir`` (each initialises when called)."""
    sources: list[Callable[[], AbstractContextManager[object]]] = [
        lambda: initialize_config_module(CONFIG_MODULE, version_base="1.3")
    ]
    if config_dir is not None:
        sources.append(lambda: initialize_config_dir(str(Path(config_dir).resolve()), version_base="1.3"))
    return sources


def available_wrappers(config_name: str, overrides: list[str], config_dir: str | None = None) -> set[str]:
    """The ``wrappers`` options Hydra can find: rlrun's, ``--config-dir``'s and those on ``hydra.searchpath``."""
    return available_options("wrappers", config_name, overrides, config_dir)


def available_options(group: str, config_name: str, overrides: list[str], config_dir: str | None = None) -> set[str]:
    """The options of a config group Hydra can find: rlrun's, ``--config-dir``'s, those on ``hydra.searchpath``
    and those of Hydra's ConfigStore (plugins' launchers and sweepers)."""
    options: set[str] = set()
    searchpath = [o for o in overrides if o.lstrip("+").startswith("hydra.searchpath")]
    for source in _sources(config_dir):
        with source():
            loader = GlobalHydra.instance().config_loader()
            try:  # with the primary config, so that its hydra.searchpath counts too
                options |= set(loader.get_group_options(group, config_name=config_name, overrides=searchpath))
            except HydraException:  # the primary config lives in the other source
                options |= set(loader.get_group_options(group, overrides=searchpath))
    return options


def check_wrapper_names(argv: CommandLine | Sequence[str], config_name: str = "config") -> None:
    """Raise :class:`UnknownOption` for a wrapper on the command line that no config search path holds."""
    command = _command(argv)
    overrides = list(command.overrides)
    names = wrapper_names(overrides)
    if not names:
        return
    try:
        available = available_wrappers(command.config_name or config_name, overrides, command.config_dir)
    except Exception:  # a search path Hydra cannot read: Hydra will say so itself
        return
    unknown = [name for name in names if name not in available]
    if not unknown:
        return
    guesses = {name: difflib.get_close_matches(name, sorted(available), n=1) for name in unknown}
    meant = ", ".join(f"{name!r} (did you mean {g[0]!r}?)" if g else repr(name) for name, g in guesses.items())
    fixed = [guesses[name][0] if guesses.get(name) else name for name in names]
    raise UnknownOption(
        f"unknown wrapper{'s' if len(unknown) > 1 else ''} {meant}; available wrappers: {', '.join(sorted(available))}",
        f"wrappers=[{','.join(fixed)}]"
        if all(guesses.values())
        else "pick wrappers from that list, or add "
        "your own as wrappers/<name>.yaml in a --config-dir or hydra.searchpath folder",
    )


def check_launcher_extras(argv: CommandLine | Sequence[str]) -> None:
    """Raise :class:`UserError` when ``hydra/launcher=`` picks a launcher whose extra is not installed."""
    for override in _command(argv).parsed:
        if override.key_or_group == "hydra/launcher" and not override.is_delete():
            launcher = override.value()
            if isinstance(launcher, str) and launcher in LAUNCHER_EXTRAS:
                families.require(LAUNCHER_EXTRAS[launcher], f"hydra/launcher={launcher}")


def check_benchmark_part(argv: CommandLine | Sequence[str]) -> None:
    """Raise :class:`UserError` when ``benchmark.part=`` names no part of the ``+benchmark=`` config chosen.

    The part picks the sweep's jobs (``conf/benchmark/zoo.yaml``), so it must be known before Hydra builds the
    sweeper, where a wrong one would end in a traceback."""
    chosen = dict(override.lstrip("+").split("=", 1) for override in _command(argv).overrides if "=" in override)
    if "benchmark.part" not in chosen or "benchmark" not in chosen:
        return
    path = Path(str(files(CONFIG_MODULE))) / "benchmark" / f"{chosen['benchmark']}.yaml"
    parts = (yaml.safe_load(path.read_text()) or {}).get("benchmark", {}).get("parts") if path.exists() else None
    if not parts:
        raise UserError(f"benchmark={chosen['benchmark']} has no parts", "leave out benchmark.part")
    if chosen["benchmark.part"] not in {str(key) for key in parts}:
        raise UserError(
            f"benchmark.part={chosen['benchmark.part']} is not a part of benchmark={chosen['benchmark']}",
            f"use one of: {', '.join(map(str, parts))} (conf/benchmark/{chosen['benchmark']}.yaml)",
        )


def check_output_folders(argv: CommandLine | Sequence[str]) -> None:
    """Raise :class:`UserError` when ``hydra.run.dir``/``hydra.sweep.dir`` cannot be created or written."""
    for override in _command(argv).overrides:
        key, _, value = override.lstrip("+").partition("=")
        if key in OUTPUT_KEYS and value and "${" not in value:
            problem = _unwritable(Path(value))
            if problem:
                raise UserError(
                    f"{key}={value} cannot be written: {problem}",
                    f"choose a folder you can write to, or leave {key} at its default (under outputs/)",
                )


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot be created and written to, or None if it can."""
    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:  # a real try, removed at once: permissions alone do not tell (root, read-only mounts, /proc)
        os.rmdir(tempfile.mkdtemp(prefix=".rlrun-write-test-", dir=existing))
    except OSError as error:
        return f"a folder cannot be created in {existing} ({error.strerror or error})"
    return None
