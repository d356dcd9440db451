"""The command line of ``rlrun``, ``rlrun-check`` and ``rlrun-tune``, read once (:class:`CommandLine`).

Hydra's flags that change where configs are found or what is run are read with ``argparse``; the overrides
(``key=value``) with Hydra's own override parser. Every later step reads this parse: the composition made
before Hydra runs (:mod:`rlrun.cli.composition`), the checks of :mod:`rlrun.cli.entry`, ``resume=``'s target.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, IntervalSweep, Override
from hydra.errors import HydraException

from rlrun.config.errors import UserError

VIEWS = ("--cfg", "-c", "--info", "-i")  # Hydra's flags that show a config instead of running it


@dataclass(frozen=True)
class CommandLine:
    """Everything after the program's name, as typed (or with whole floats rewritten), and its parse."""

    argv: tuple[str, ...]
    config_dir: str | None
    config_name: str | None
    multirun: bool
    view: str | None  # --cfg/--info: Hydra shows a config and runs nothing
    parsed: tuple[Override, ...]

    @classmethod
    def parse(cls, argv: Sequence[str]) -> CommandLine:
        """Read ``argv``; raise :class:`UserError` when Hydra's grammar cannot read an override."""
        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--config-dir", "-cd")
        parser.add_argument("--config-name", "-cn")
        parser.add_argument("--multirun", "-m", action="store_true")
        for flag, short in (("--package", "-p"), ("--config-path", "-cp"), ("--experimental-rerun", None)):
            parser.add_argument(flag, *([short] if short else []))
        parser.add_argument("--cfg", "-c")
        parser.add_argument("--info", "-i", nargs="?", const="all")
        flags, rest = parser.parse_known_args(list(argv))
        view = next((a.split("=")[0] for a in argv if a.split("=")[0] in VIEWS), None)
        try:
            parsed = OverridesParser.create().parse_overrides([a for a in rest if not a.startswith("-")])
        except HydraException as problem:
            first = str(problem).splitlines()[0]
            raise UserError(
                f"cannot read the overrides: {first}", "write them as key=value (Hydra's grammar)"
            ) from None
        return cls(tuple(argv), flags.config_dir, flags.config_name, flags.multirun, view, tuple(parsed))

    def given(self, key: str) -> Override | None:
        """The first override of ``key`` (``+key=`` and ``++key=`` too), or None."""
        return next((o for o in self.parsed if o.key_or_group == key and not o.is_delete()), None)

    def value(self, key: str) -> Any:
        """The value the command line gives ``key`` (as Hydra's grammar reads it), or None."""
        override = self.given(key)
        return None if override is None or override.is_sweep_override() else override.value()

    def keys(self) -> list[str]:
        """The keys and groups the overrides name, in order."""
        return [o.key_or_group for o in self.parsed]

    def first_job(self) -> list[str]:
        """The overrides of a sweep's first job (each sweep at its first value): what one job composes."""
        return [first_value(o) for o in self.parsed]

    def rewritten(self, old: Override, new: str) -> CommandLine:
        """The same command line with the override ``old`` replaced by the text ``new``, read again."""
        return CommandLine.parse([new if arg == text(old) else arg for arg in self.argv])

    def without(self, old: Override) -> CommandLine:
        """The same command line without the override ``old``."""
        return CommandLine.parse([arg for arg in self.argv if arg != text(old)])


def text(override: Override) -> str:
    """The override as typed."""
    return override.input_line or ""


def first_value(override: Override) -> str:
    """``override``, a sweep replaced by its first value."""
    if not override.is_sweep_override() or isinstance(override.value(), (Glob, IntervalSweep)):  # not listable here
        return text(override)
    return f"{override.get_key_element()}={next(iter(override.sweep_string_iterator()))}"


def values(override: Override) -> list[str]:
    """Each value a sweep override gives (as text); the one value of a plain override."""
    if not override.is_sweep_override():
        return [override.get_value_element_as_str()]
    return list(override.sweep_string_iterator())
