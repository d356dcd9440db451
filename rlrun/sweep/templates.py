"""A sweep's job configs, composed by Hydra once per shape instead of once per job.

Composing a config (defaults list, every file read and merged) takes Hydra a good part of a second, so a sweep
of 1,000 seeds planned in silence for minutes. Jobs that differ only in plain values (``seed=3``,
``algo.learning_rate=0.001``: a key the config already has, set to a number, string or bool; not a config group,
not ``+``/``~``/``++``, nothing under ``hydra``) compose to the same config but for those values, which Hydra
sets last, with ``OmegaConf.update(..., merge=True)``, after the defaults list is composed
(``ConfigLoaderImpl._apply_overrides_to_config``). So the first job of each shape is composed by Hydra and the
others are copies of it with their own values set the same way; a job whose values do not fit that pattern is
composed by Hydra itself. Override strings are parsed once each, and ``key=<integer>`` (a seed) without
Hydra's grammar, whose parser is slower than the rest of a job's planning.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from rlrun.config.keys import ABSENT

_INTEGER = re.compile(r"([A-Za-z_][\w.]*)=(0|-?[1-9][0-9]*)")  # as Hydra's grammar reads it: key, int value


@dataclass(frozen=True)
class _Value:
    """One override: its key, its value, whether it may be set on a copy (before the groups are known)."""

    key: str
    value: Any
    scalar: bool


@dataclass
class Composed:
    """A job's config as the job will see it (Hydra's node removed) and the group choices it was composed with."""

    task: DictConfig
    choices: dict[str, Any]


def _value(override: Override) -> _Value:
    key = override.key_or_group
    simple = not (override.is_add() or override.is_delete() or override.is_force_add() or override.package)
    value = override.value()
    scalar = isinstance(value, (int, float, str, bool)) and simple and "/" not in key and not key.startswith("hydra")
    return _Value(key, value, scalar)


def _overlap(key: str, other: str) -> bool:
    """Whether two keys name the same node or one lies inside the other (the order they are set in matters)."""
    return key == other or key.startswith(f"{other}.") or other.startswith(f"{key}.")


def _split(composed: DictConfig) -> Composed:
    choices = dict(composed.hydra.runtime.choices)
    task = copy.deepcopy(composed)  # what the job sees: Hydra's run_job drops the hydra node
    with read_write(task), open_dict(task):
        del task["hydra"]
    return Composed(task, choices)


class Templates:
    """Job configs of a sweep; :attr:`compositions` counts the ones Hydra composed."""

    def __init__(
        self, compose: Callable[[list[str]], DictConfig], parse: Callable[[list[str]], Sequence[Override]]
    ) -> None:
        self.compose = compose  # Hydra's composition of one job (the sweeper's load_sweep_config)
        self.parse = parse  # Hydra's override parser
        self.compositions = 0
        self.groups: set[str] = set()
        self._parsed: dict[str, _Value] = {}
        self._templates: dict[tuple[str, ...], tuple[Composed, bool]] = {}

    def _hydra(self, overrides: list[str]) -> Composed:
        self.compositions += 1
        composed = _split(self.compose(overrides))
        self.groups.update(composed.choices)  # config groups are never set on a copy
        return composed

    def _read(self, text: str) -> _Value:
        if text not in self._parsed:
            integer = _INTEGER.fullmatch(text)
            self._parsed[text] = _Value(integer[1], int(integer[2]), True) if integer else _value(self.parse([text])[0])
        return self._parsed[text]

    def config(self, overrides: list[str]) -> Composed:
        """The job's config: Hydra's composition of ``overrides``, made from its shape's template."""
        first = None if self.groups else self._hydra(overrides)  # the config groups, known from then on
        values = [self._read(text) for text in overrides]
        settable = [v.scalar and v.key not in self.groups for v in values]
        plain = [v for v, ok in zip(values, settable, strict=True) if ok]
        others = [(text, v) for text, v, ok in zip(overrides, values, settable, strict=True) if not ok]
        shape = tuple(sorted({v.key for v in plain})) + tuple(text for text, _ in others)
        if shape not in self._templates:
            composed = first or self._hydra(overrides)
            fits = all(
                v.key not in composed.choices
                and OmegaConf.select(composed.task, v.key, default=ABSENT) is not ABSENT
                and not any(_overlap(v.key, o.key) for _, o in others if o.key not in self.groups)
                for v in plain
            )
            self._templates[shape] = (composed, fits)
            return composed
        template, fits = self._templates[shape]
        if not fits:
            return self._hydra(overrides)
        task = copy.deepcopy(template.task)
        try:
            for v in plain:  # as Hydra applies a command-line value, last
                OmegaConf.update(task, v.key, v.value, merge=True)
        except Exception:  # a value the schema refuses: Hydra's own composition reports it
            return self._hydra(overrides)
        return Composed(task, template.choices)
