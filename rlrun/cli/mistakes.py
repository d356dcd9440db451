"""Command-line mistakes rlrun answers itself, before Hydra composes or prints anything (exit status 2).

Hydra would report them with its own words, exit status 1 and, for an option it cannot find, a list of every
option: an unknown key (``algo.learning_rat=0.1``), an unknown group option (``env=cartpol``), a value of the
wrong type (``total_timesteps=1e4``, a float for an integer), a ``--config-dir`` file that is not YAML. Here each
override is checked against the schema (:mod:`rlrun.config.schema`), the group listings and the algorithm's
config file; a whole float given to an integer key is rewritten (``total_timesteps=10000``) before Hydra reads
the command line. Only an override these cannot vouch for (a ``+``/``~`` override, a key only a preset sets, a
``hydra.*`` key, a user's ``--config-dir``) costs a composition here, with Hydra's compose API; what that
composition refuses is translated, never shown raw. A run without such overrides composes only once, in Hydra.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import typing
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from hydra.core.override_parser.types import ChoiceSweep, Override, RangeSweep

from rlrun.cli import command_line, composition
from rlrun.cli.command_line import CommandLine, UnknownOption
from rlrun.config.errors import UserError

# hydra.* keys every Hydra config has, whatever launcher and sweeper are chosen
HYDRA_KEYS = ("hydra.run.dir", "hydra.sweep.dir", "hydra.sweep.subdir", "hydra.output_subdir", "hydra.job.chdir")
LONG_LIST = 20  # group options listed in a message up to this many (rlrun-envs lists the envs)
_ABSENT = object()


def check(command: CommandLine, schema: type, config_name: str = "config") -> CommandLine:
    """Raise :class:`UserError` for the first mistake on ``command``; return the command line Hydra is to read
    (whole floats given to integer keys rewritten as integers)."""
    if command.syntax_error:
        raise UserError(
            f"cannot read the overrides: {command.syntax_error}",
            "write them as key=value (hydra.cc's override grammar)",
        )
    if command.config_dir:
        _check_yaml(Path(command.config_dir))
    folders = _folders(command)
    name = command.config_name or config_name
    own_primary = any((folder / f"{name}.yaml").is_file() for folder in folders[:-1])  # the user's primary config
    changes: dict[str, str] = {}
    unsure: list[Override] = []
    for override in command.parsed:
        if "/" in override.key_or_group or override.key_or_group in _groups(folders):
            _check_options(override, command, folders, name)
            if override.is_add() or override.is_force_add() or override.package is not None:
                unsure.append(override)  # a valid option, but whether the defaults list takes it is Hydra's to say
            continue
        if own_primary or override.key_or_group.startswith("hydra.") and override.key_or_group not in HYDRA_KEYS:
            unsure.append(override)
            continue
        rewritten, sure = _check_value(override, schema, folders, command, name)
        if rewritten:
            changes[text(override)] = rewritten
        if not sure:
            unsure.append(override)
    checked = command.rewritten(changes) if changes else command
    if unsure or command.config_dir or command.value("hydra.searchpath"):
        unsure_lines = {changes.get(text(o), text(o)) for o in unsure}
        composition.check(checked, name, [o for o in checked.parsed if text(o) in unsure_lines])
    return checked


def text(override: Override) -> str:
    """The override as typed."""
    return override.input_line or ""


def _folders(command: CommandLine) -> list[Path]:
    """Where config files are found, the user's ``--config-dir`` first (as Hydra searches), rlrun's last."""
    own = Path(str(files(command_line.CONFIG_MODULE)))
    return [Path(command.config_dir), own] if command.config_dir else [own]


def _groups(folders: list[Path]) -> set[str]:
    return {path.name for folder in folders if folder.is_dir() for path in folder.iterdir() if path.is_dir()}


@functools.cache
def _yaml(path: Path) -> Any:
    """A config file's content (libyaml's parser where installed: these files are read on every start)."""
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _check_yaml(config_dir: Path) -> None:
    """Raise :class:`UserError` naming the file and line of a YAML file in ``config_dir`` that does not parse."""
    hidden = {p for p in config_dir.rglob(".*")}
    for path in sorted(config_dir.rglob("*.yaml")):
        if hidden.intersection(path.parents) or path in hidden:
            continue  # .git/, .venv/ and the like hold no configs
        try:
            _yaml(path)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise UserError(f"{path}{line} is not valid YAML: {problem}", f"fix the YAML at {path}{line}") from error
        except (UnicodeDecodeError, OSError) as error:
            raise UserError(f"{path} cannot be read as YAML: {error}", f"fix or remove {path}") from error


def _options_given(override: Override) -> list[str]:
    """The option names a group override picks (a list, a sweep of them); none for a deletion."""
    if override.is_delete():
        return []
    return [name for name in command_line.strings(override.value()) if "${" not in name]


def _check_options(override: Override, command: CommandLine, folders: list[Path], config_name: str) -> None:
    """Raise :class:`UnknownOption` for an option of ``group=`` that no config search path holds."""
    group = override.key_or_group
    if group == "wrappers":  # the list, with the closest name for each
        command_line.check_wrapper_names(command, config_name)
        return
    given = _options_given(override)
    if all(any((folder / group / f"{name}.yaml").is_file() for folder in folders) for name in given):
        return  # the common case, without asking Hydra's config loader
    available = command_line.available_options(group, config_name, list(command.overrides), command.config_dir)
    unknown = [name for name in given if name not in available]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], sorted(available), n=1)
    meant = f" (did you mean {close[0]!r}?)" if close else ""
    listed = "" if len(available) > LONG_LIST else f"; available: {', '.join(sorted(available))}"
    where = (
        "rlrun-envs lists them"
        if group == "env"
        else f"or add your own as {group}/<name>.yaml in a --config-dir folder"
    )
    raise UnknownOption(
        f"unknown {group} {unknown[0]!r}{meant}{listed}",
        f"{override.get_key_element()}={close[0]}" if close and len(given) == 1 else f"pick one that exists ({where})",
    )


def _check_value(
    override: Override, schema: type, folders: list[Path], command: CommandLine, primary: str
) -> tuple[str | None, bool]:
    """For ``key=value``: the override rewritten (or None) and whether it surely composes; raise
    :class:`UserError` for a key the schema does not have or a value its type cannot take."""
    key = override.key_or_group
    if override.is_delete() or override.is_add() or override.is_force_add():
        return None, False
    if key.startswith("hydra."):
        return None, True
    hint, rest = _schema_hint(schema, key, text(override).split("=", 1)[-1])
    if hint is None:
        return None, _in_group_files(key, folders, command, primary)
    if rest:
        return None, False
    values = _values(override)
    if values is None:
        return None, False
    fits = [_fits(hint, value) for value in values]
    for value, fit in zip(values, fits, strict=True):
        if fit == "bad":
            raise _wrong_type(key, value, hint)
    if "whole" in fits:
        return _with_integers(override, values), True
    return None, "unsure" not in fits


def _schema_hint(schema: type, key: str, value: str) -> tuple[Any, list[str]]:
    """The type the schema declares for ``key`` and the part of the key below it (inside a free-form
    mapping such as ``algo`` or ``env.kwargs``); ``(None, ...)`` for a key under a free-form mapping
    whose values only config files know; raise for a key the schema does not have."""
    parts = key.split(".")
    cls: Any = schema
    for depth, part in enumerate(parts):
        hints = typing.get_type_hints(cls)
        if part not in hints:
            raise _unknown_key(key, value, schema)
        hint = hints[part]
        if not dataclasses.is_dataclass(hint):
            rest = parts[depth + 1 :]
            if rest and typing.get_origin(hint) is dict:
                return None, rest  # algo.*, env.kwargs.*, logger.*: what the chosen files hold
            return hint, rest
        cls = hint
    return cls, []


def _leaf_keys(cls: Any, prefix: str = "") -> Iterator[str]:
    for name, hint in typing.get_type_hints(cls).items():
        yield f"{prefix}{name}"
        if dataclasses.is_dataclass(hint):
            yield from _leaf_keys(hint, f"{prefix}{name}.")


def _unknown_key(key: str, value: str, schema: type) -> UserError:
    keys = list(_leaf_keys(schema))
    parent = key.rpartition(".")[0]
    siblings = [k for k in keys if k.rpartition(".")[0] == parent]
    close = difflib.get_close_matches(key, siblings, n=2, cutoff=0.6) or difflib.get_close_matches(key, keys, n=2)
    if not close:  # a key given without its node: n_envs for env.n_envs
        close = [k for k in keys if k.rsplit(".", 1)[-1] == key.rsplit(".", 1)[-1]]
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    return UserError(
        f"{key} is not a key of rlrun's config{meant}",
        f"{close[0]}={value}" if close else "`rlrun --cfg job` prints every key with its value",
    )


def _values(override: Override) -> list[Any] | None:
    """The values an override gives its key (one, or each of a sweep); None when not plain values."""
    value = override.value()
    if isinstance(value, ChoiceSweep):
        return list(value.list)
    if isinstance(value, RangeSweep):
        return None if any(isinstance(v, float) for v in (value.start, value.stop, value.step)) else [0]
    return None if override.is_sweep_override() else [value]


def _fits(hint: Any, value: Any) -> str:
    """``ok``, ``whole`` (a whole float for an integer), ``bad`` or ``unsure`` (left to the composition)."""
    args = typing.get_args(hint)
    optional = type(None) in args
    if optional:
        (hint,) = [a for a in args if a is not type(None)] or [Any]
    if value is None:
        return "ok" if optional else "bad"
    if isinstance(value, str) and "${" in value:
        return "unsure"
    scalar = isinstance(value, (str, int, float, bool))
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return "whole"
        return (
            "ok"
            if isinstance(value, int) and not isinstance(value, bool)
            else "unsure"
            if value is True or value is False
            else "bad"
        )
    if hint is float:
        return (
            "ok"
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else "bad"
            if not isinstance(value, bool)
            else "unsure"
        )
    if hint is str:
        return "ok" if scalar else "bad"
    if hint is bool:
        return "ok" if isinstance(value, bool) else "unsure" if scalar else "bad"
    return "ok" if typing.get_origin(hint) is dict and isinstance(value, dict) else "unsure"


def _wrong_type(key: str, value: Any, hint: Any) -> UserError:
    wanted = {int: "a whole number", float: "a number", bool: "true or false", str: "a string"}
    base = next((t for t in (int, float, bool, str) if t is hint or t in typing.get_args(hint)), None)
    kind = wanted.get(base, str(hint)) if base else str(hint)
    if value is None:
        return UserError(
            f"{key}=null: {key} takes {kind}, not null", f"give {key} a value, or leave it out for its default"
        )
    example = f"{key}={round(value)}" if isinstance(value, float) and base is int else f"give {key} {kind}"
    return UserError(f"{key}={value!r}: {key} takes {kind}", example)


def _with_integers(override: Override, values: list[Any]) -> str:
    """``total_timesteps=1e4`` as ``total_timesteps=10000`` (each value of a sweep too)."""
    text = ",".join(str(int(v)) if isinstance(v, float) else str(v) for v in values)
    value = override.value()
    if isinstance(value, ChoiceSweep) and not value.simple_form:
        text = f"choice({text})"
    return f"{override.get_key_element()}={text}"


def _chosen(group: str, folders: list[Path], command: CommandLine, primary: str) -> tuple[list[str], bool]:
    """The options of ``group`` this command line picks (its override, or the primary config's default), and
    whether the group takes a list of them."""
    given = next((o for o in command.parsed if o.key_or_group == group and not o.is_delete()), None)
    if given is not None:
        return _options_given(given), isinstance(given.value(), list)
    for entry in _yaml(folders[-1] / f"{primary}.yaml").get("defaults", []):
        if isinstance(entry, dict) and group in entry:
            value = entry[group]
            return ([str(v) for v in value], True) if isinstance(value, list) else ([str(value)], False)
    return [], False


def _in_group_files(key: str, folders: list[Path], command: CommandLine, primary: str) -> bool:
    """Whether every file the command line picks for ``key``'s group (``algo`` for ``algo.n_steps``) holds the key."""
    group, *path = key.split(".")
    if group not in _groups(folders):
        return False
    names, several = _chosen(group, folders, command, primary)
    found = []
    for name in names:
        file = next((f / group / f"{name}.yaml" for f in folders if (f / group / f"{name}.yaml").is_file()), None)
        node: Any = _yaml(file) if file else _ABSENT
        for part in path:
            node = node.get(part, _ABSENT) if isinstance(node, dict) else _ABSENT
        found.append(node is not _ABSENT)
    # a list group (logger, wrappers): one of its files holds the key; else each option a sweep picks
    return bool(found) and (any(found) if several else all(found))
