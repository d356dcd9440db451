"""What Hydra's composition refused, in rlrun's words: the problem, the closest names and the fix.

Each function takes what it reports on as values (Hydra's parse of the override, the options Hydra lists, the
config composed without the override) and returns a :class:`UserError`; :mod:`rlrun.cli.composition` composes and
picks which applies. Nothing here imports torch, SB3 or JAX: an ``algo.*`` key is checked against the algorithm's
constructor read from its source (:mod:`rlrun.config.arguments`).
"""

from __future__ import annotations

import difflib
import inspect
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rlrun.config.arguments import constructor_arguments
from rlrun.config.errors import UserError

LONG_LIST = 20  # group options listed in a message up to this many (rlrun-envs lists the envs)
# words of OmegaConf's type errors -> what the key takes
KINDS = {"to Integer": "a whole number", "to Float": "a number", "valid bool": "true or false", "to String": "a string"}
SHOW_KEYS = "`rlrun --cfg job` prints every key with its value"


def text(override: Override) -> str:
    """The override as typed."""
    return override.input_line or ""


def names(value: object) -> Iterator[str]:
    """Every name in a parsed override value: a list, a sweep of lists (a number or a boolean as written)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from names(item)
    elif hasattr(value, "list"):  # ChoiceSweep
        yield from names(value.list)
    else:
        yield str(value).lower() if isinstance(value, bool) else str(value)


def unknown_option(group: str, name: str, available: Sequence[str], override: Override | None) -> UserError:
    """An option of ``group`` that no folder on Hydra's search path holds."""
    if group == "wrappers":
        return unknown_wrappers(list(names(override.value())) if override else [name], available)
    close = difflib.get_close_matches(name, available, n=1)
    meant = f" (did you mean {close[0]!r}?)" if close else ""
    listed = "" if len(available) > LONG_LIST else f"; available: {', '.join(available)}"
    where = "rlrun-envs lists them" if group == "env" else f"or add your own as {group}/<name>.yaml in a --config-dir"
    if close and override is not None and not override.is_sweep_override():
        return UserError(f"unknown {group} {name!r}{meant}{listed}", f"{override.get_key_element()}={close[0]}")
    return UserError(f"unknown {group} {name!r}{meant}{listed}", f"pick one that exists ({where})")


def unknown_wrappers(given: list[str], available: Sequence[str]) -> UserError:
    """Wrappers no folder holds: the list, and the closest name for each."""
    given = list(dict.fromkeys(given))
    guesses = {name: difflib.get_close_matches(name, available, n=1) for name in given if name not in available}
    meant = ", ".join(f"{name!r} (did you mean {g[0]!r}?)" if g else repr(name) for name, g in guesses.items())
    fixed = [guesses[name][0] if guesses.get(name) else name for name in given]
    problem = f"unknown wrapper{'s' if len(guesses) > 1 else ''} {meant}; available wrappers: {', '.join(available)}"
    if all(guesses.values()):
        return UserError(problem, f"wrappers=[{','.join(fixed)}]")
    where = "a --config-dir or hydra.searchpath folder"
    return UserError(problem, f"pick wrappers from that list, or add your own as wrappers/<name>.yaml in {where}")


def wrong_type(key: str, said: str, given: Any, current: Any = None) -> UserError:
    """A value the schema's type cannot take (``said``: OmegaConf's message): ``seed=0.5: seed takes a whole
    number``; the fix is an override: the whole number nearest ``given``, else the key's value without it
    (``current``: :func:`current_value`)."""
    if given is None:
        return UserError(f"{key}=null: {key} cannot be null", f"give {key} a value, or leave it out for its default")
    kind = next((words for words_said, words in KINDS.items() if words_said in said), "another type")
    whole = isinstance(given, float) and math.isfinite(given) and kind == KINDS["to Integer"]
    if whole:
        fix = f"{key}={round(given)}"
    elif isinstance(current, (bool, int, float, str)):
        fix = f"{key}={str(current).lower() if isinstance(current, bool) else current}"
    else:
        fix = f"give {key} {kind}"
    return UserError(f"{key}={given!r}: {key} takes {kind}", fix)


def current_value(error: Exception) -> Any:
    """The value OmegaConf's validation ``error`` kept for its key: the key's value without the refused override."""
    parent, key = getattr(error, "parent_node", None), getattr(error, "key", None)
    return parent.get(key) if isinstance(parent, DictConfig) and key is not None else None


def missing_key(key: str, override: Override, base: DictConfig) -> UserError:
    """A key the config does not have (``base``: the config composed without it): the closest keys of its node;
    for ``algo.*``, the algorithm constructor's arguments."""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(base, parent, default=None) if parent else base
    siblings = [str(k) for k in node] if isinstance(node, DictConfig) else []
    if parent == "algo" and "_target_" in siblings:
        return not_an_argument(override, str(base.algo.get("_target_")))
    if parent.startswith("hydra") or not _in_schema(node):  # a free-form mapping, or Hydra's own keys
        close = difflib.get_close_matches(leaf, siblings, n=3, cutoff=0.6)
        meant = f" (did you mean {', '.join(f'{parent}.{c}' if parent else c for c in close)}?)" if close else ""
        owner = f"the {parent} config" if parent else "rlrun's config"
        return UserError(f"{key} is not a key of {owner}{meant}", f"+{text(override)} adds a key the config lacks")
    keys = list(_schema_keys(base, ""))
    close = [k for k in keys if k.rsplit(".", 1)[-1] == leaf]  # a key given without its node: n_envs
    close = close or difflib.get_close_matches(key, [k for k in keys if k.rpartition(".")[0] == parent], 2, 0.6)
    close = close or difflib.get_close_matches(key, keys, n=2)
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    fix = f"{close[0]}={override.get_value_element_as_str()}" if close else SHOW_KEYS
    return UserError(f"{key} is not a key of rlrun's config{meant}", fix)


def _in_schema(node: object) -> bool:
    """Whether a config node is one of rlrun's schema's dataclasses (not a free-form mapping of the files)."""
    kind = OmegaConf.get_type(node) if isinstance(node, DictConfig) else None
    return inspect.isclass(kind) and kind is not dict


def _schema_keys(node: DictConfig, prefix: str) -> Iterator[str]:
    """The dotted keys of rlrun's schema (not Hydra's node, not the free-form mappings' contents)."""
    for name in map(str, node):
        if prefix == "" and name == "hydra":
            continue
        yield f"{prefix}{name}"
        try:
            child = node[name]
        except OmegaConfBaseException:  # an interpolation that cannot be resolved yet: a leaf
            continue
        if isinstance(child, DictConfig) and _in_schema(child):
            yield from _schema_keys(child, f"{prefix}{name}.")


def not_an_argument(override: Override, target: str) -> UserError:
    """``algo.<name>=`` for a name the algorithm's file does not set: its constructor's closest arguments."""
    key, name = override.key_or_group, target.rpartition(".")[2]
    leaf = key.split(".", 1)[1]
    params = constructor_arguments(target)
    if leaf in params:
        return UserError(f"{key} is not set in the algo config", f"+{text(override)} adds it")
    close = difflib.get_close_matches(leaf, params, n=3, cutoff=0.6)
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    value = override.get_value_element_as_str()
    return UserError(
        f"{key} is not an argument of {name}{meant}",
        f"algo.{close[0]}={value}" if close else f"{name} takes: {', '.join(params)}",
    )


def not_yaml(error: yaml.YAMLError, config_dir: str | None) -> UserError:
    """A config file that does not parse: its file and line, named as ``--config-dir`` names its folder."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return UserError(f"a config file is not valid YAML: {error}", "fix the YAML it names")
    path = Path(mark.name)
    if config_dir and path.is_relative_to(Path(config_dir).absolute()):
        path = Path(config_dir) / path.relative_to(Path(config_dir).absolute())
    where = f"{path}:{mark.line + 1}"
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return UserError(f"{where} is not valid YAML: {problem}", f"fix the YAML at {where}")


def bad_option(said: str) -> UserError | None:
    """A config group's option file that Hydra read but could not merge (``said``: Hydra's message, ``In
    'algo/mine': ValidationError raised while composing config: ...``): a value of the wrong type for its key, or a
    list where the group takes a mapping of keys. None for another message."""
    found = re.match(r"In '([^']+)': (\w+) raised while composing config:\s*(.*)", said, re.DOTALL)
    if found is None:
        return None
    option, kind, detail = found.groups()
    file, first = f"{option}.yaml", (detail.strip().splitlines() or [kind])[0].strip()
    key = re.search(r"full_key: (\S+)", detail)
    value = re.match(r"Value '(.*)' of type", first)
    takes = next((words for words_said, words in KINDS.items() if words_said in first), None)
    if key and value and takes:
        problem = f"{file} sets {key[1]}={value[1]!r}, but {key[1]} takes {takes}"
        return UserError(problem, f"give {key[1].rpartition('.')[2]} {takes} in {file} (in your --config-dir)")
    if "ListConfig" in first:
        group = option.rpartition("/")[0]
        problem = f"{file} holds a list, but an option of {group}/ is a mapping of keys (key: value lines)"
        return UserError(problem, f"write {file} as key: value lines, as rlrun's own {group} files are ({SHOW_KEYS})")
    return UserError(f"{file} cannot be composed: {first}", f"correct {file} (in your --config-dir)")


def not_composed(error: Exception, named: Override | None) -> UserError:
    """Any other refusal: an option file Hydra could not merge (:func:`bad_option`), else Hydra's first line (and
    its cause's) and the fix for the override it names."""
    if (option := bad_option(str(error))) is not None:
        return option
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    problem = lines[0] if lines else type(error).__name__
    if error.__cause__ is not None:
        detail = next((line.strip() for line in str(error.__cause__).splitlines() if line.strip()), "")
        problem = f"{problem}: {detail}"
    fix = _fix(named) if named is not None else None
    return UserError(f"the config cannot be composed: {problem}", fix or SHOW_KEYS)


def _fix(override: Override) -> str | None:
    """The fix for an override of a shape Hydra refused: a group chosen with ``+``, ``++`` or ``@package`` where
    the defaults list already has it; a deletion; a value given to a group of keys."""
    key, line = override.key_or_group, text(override)
    if "." not in key and (override.is_add() or override.is_force_add() or override.package is not None):
        return f"{key}={override.value()} (without + or @: the defaults list already has {key}, this picks its option)"
    if override.is_delete():
        return f"remove {line} (a key of rlrun's schema is set, not deleted; `rlrun --cfg job` lists the keys)"
    if "." not in key and not override.is_add():
        return f"{key} is a group of keys: set one of them, as {key}.<key>=... (`rlrun --cfg job` lists them)"
    return None
