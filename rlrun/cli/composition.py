"""Hydra composes the command line's config before Hydra's own entry runs, and rlrun translates what it refuses.

The composition is Hydra's compose API on the same search path the run will use (:mod:`rlrun.cli.entry`), so
whatever Hydra would refuse (an unknown option or key, a value of the wrong type, a malformed config file, an
override of the wrong shape) is found here, before anything is created, and said in rlrun's words with the
closest names and a fix: exit status 2, no traceback. A sweep composes its first job, and each option of a config
group it sweeps. A whole float given to an integer key (``total_timesteps=1e4``) is rewritten as the integer.
"""

from __future__ import annotations

import difflib
import math
import inspect
from collections.abc import Iterator
from pathlib import Path

import yaml
from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException, MissingConfigException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException, ValidationError

from rlrun.cli.command_line import CommandLine, first_value, text, values
from rlrun.config.errors import UserError
from rlrun.config.user_configs import BUNDLED

LONG_LIST = 20  # group options listed in a message up to this many (rlrun-envs lists the envs)
KINDS = {"to Integer": "a whole number", "to Float": "a number", "valid bool": "true or false", "to String": "a string"}


def compose_checked(command: CommandLine, config_name: str) -> tuple[CommandLine, DictConfig]:
    """The command line Hydra is to read (whole floats rewritten) and its (first job's) config, Hydra's node
    included; raise :class:`UserError` for what Hydra refuses."""
    with initialize_config_module(BUNDLED, version_base="1.3"):
        for _ in range(len(command.parsed) + 1):  # each rewrite makes one override whole
            try:
                return command, _compose_jobs(command, config_name)
            except yaml.YAMLError as error:  # a config file of the user's that is not YAML, as Hydra read it
                raise _not_yaml(error, command) from None
            except (HydraException, OmegaConfBaseException) as error:
                rewritten = _rewritten(error, command)
                if rewritten is None:
                    raise _translated(error, command, config_name) from None
                command = rewritten
    raise AssertionError("unreachable: each override is rewritten at most once")


def _compose(config_name: str, overrides: list[str]) -> DictConfig:
    return compose(config_name, overrides, return_hydra_config=True)


def _compose_jobs(command: CommandLine, config_name: str) -> DictConfig:
    """The first job's config; then each other option of a swept config group, composed with the first job's
    other values (the options of a group decide what files are read; plain values are the sweeper's)."""
    first = command.first_job()
    cfg = _compose(config_name, first)
    for i, override in enumerate(command.parsed):
        if override.is_sweep_override() and first[i] != text(override) and _options(override.key_or_group):
            for value in values(override)[1:]:
                _compose(config_name, [*first[:i], f"{override.get_key_element()}={value}", *first[i + 1 :]])
    return cfg


def _rewritten(error: Exception, command: CommandLine) -> CommandLine | None:
    """``command`` with a whole float given to an integer key written as the integer (each value of a sweep),
    when that is what Hydra refused; else None."""
    cause = error.__cause__
    if not (isinstance(cause, ValidationError) and "to Integer" in str(cause) and cause.full_key):
        return None
    override = command.given(cause.full_key)
    if override is None:
        return None
    given = values(override)
    whole = [_whole(value) for value in given]
    if None in whole or whole == given:
        return None
    joined = ",".join(str(w) for w in whole)
    value = override.value()
    sweep = override.is_sweep_override() and not getattr(value, "simple_form", True)
    return command.rewritten(override, f"{override.get_key_element()}={f'choice({joined})' if sweep else joined}")


def _whole(value: str) -> str | None:
    """``1e4`` as ``10000``; an integer as it is; None for anything else."""
    try:
        number = float(value)
    except ValueError:
        return None
    return str(int(number)) if number.is_integer() and value.strip().lower() not in ("inf", "nan") else None


def _translated(error: Exception, command: CommandLine, config_name: str) -> UserError:
    """What Hydra refused, in rlrun's words."""
    if isinstance(error, MissingConfigException):
        return _missing_config(error, command, config_name)
    cause = error.__cause__
    wrong_type = any(words in str(cause) for words in (*KINDS, "is not Optional"))
    if isinstance(cause, ValidationError) and wrong_type and command.given(str(cause.full_key)) is not None:
        return _wrong_type(cause, command)
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and cause.full_key:
        return _missing_key(cause.full_key, command, config_name)
    return _composition_failed(error, command, config_name)


def _not_yaml(error: yaml.YAMLError, command: CommandLine) -> UserError:
    """A config file that does not parse: its file and line, named as ``--config-dir`` names its folder."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return UserError(f"a config file is not valid YAML: {error}", "fix the YAML it names")
    path = Path(mark.name)
    if command.config_dir and path.is_relative_to(Path(command.config_dir).absolute()):
        path = Path(command.config_dir) / path.relative_to(Path(command.config_dir).absolute())
    where = f"{path}:{mark.line + 1}"
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return UserError(f"{where} is not valid YAML: {problem}", f"fix the YAML at {where}")


def _options(group: str, command: CommandLine | None = None, config_name: str | None = None) -> list[str]:
    """The options of a config group Hydra finds (with the command line's ``hydra.searchpath``, when given)."""
    loader = GlobalHydra.instance().config_loader()
    given = command.given("hydra.searchpath") if command else None
    searchpath = [] if given is None else [text(given)]
    try:
        return sorted(loader.get_group_options(group, config_name=config_name, overrides=searchpath))
    except HydraException:  # the primary config is not there to read hydra.searchpath from
        return sorted(loader.get_group_options(group))


def _strings(value: object) -> Iterator[str]:
    """Every string in a parsed override value: a list, a sweep of lists (a number as it was written)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "list"):  # ChoiceSweep
        yield from _strings(value.list)
    else:
        yield str(value).lower() if isinstance(value, bool) else str(value)


def _missing_config(error: MissingConfigException, command: CommandLine, config_name: str) -> UserError:
    """A config file Hydra could not find: the group's options and the closest name."""
    group, _, name = str(error.missing_cfg_file).rpartition("/")
    if not group:
        return UserError(f"no config named {name!r} (--config-name)", "leave out --config-name, or name a file there")
    return _unknown_option(group, name, command, config_name)


def _unknown_option(group: str, name: str, command: CommandLine, config_name: str) -> UserError:
    """An option of ``group`` that no config search path holds."""
    available = _options(group, command, config_name)
    if group == "wrappers":
        return _unknown_wrappers(command, available)
    close = difflib.get_close_matches(name, available, n=1)
    meant = f" (did you mean {close[0]!r}?)" if close else ""
    listed = "" if len(available) > LONG_LIST else f"; available: {', '.join(available)}"
    where = "rlrun-envs lists them" if group == "env" else f"or add your own as {group}/<name>.yaml in a --config-dir"
    override = command.given(group)
    one = override is not None and not override.is_sweep_override() and close
    return UserError(
        f"unknown {group} {name!r}{meant}{listed}",
        f"{override.get_key_element()}={close[0]}" if one and override else f"pick one that exists ({where})",
    )


def _unknown_wrappers(command: CommandLine, available: list[str]) -> UserError:
    """Wrappers Hydra could not find: the list, and the closest name for each."""
    override = command.given("wrappers")
    names = list(dict.fromkeys(_strings(override.value()))) if override is not None else []
    unknown = [name for name in names if name not in available]
    guesses = {name: difflib.get_close_matches(name, available, n=1) for name in unknown}
    meant = ", ".join(f"{name!r} (did you mean {g[0]!r}?)" if g else repr(name) for name, g in guesses.items())
    fixed = [guesses[name][0] if guesses.get(name) else name for name in names]
    return UserError(
        f"unknown wrapper{'s' if len(unknown) > 1 else ''} {meant}; available wrappers: {', '.join(available)}",
        f"wrappers=[{','.join(fixed)}]"
        if all(guesses.values())
        else "pick wrappers from that list, or add your own as wrappers/<name>.yaml in a --config-dir or "
        "hydra.searchpath folder",
    )


def _wrong_type(cause: ValidationError, command: CommandLine) -> UserError:
    """A value the schema's type cannot take: ``seed=0.5: seed takes a whole number``."""
    key = str(cause.full_key)
    kind = next((words for said, words in KINDS.items() if said in str(cause)), "another type")
    override = command.given(key)
    assert override is not None  # _translated checked
    given = next(iter(override.sweep_iterator())) if override.is_sweep_override() else override.value()
    if given is None:
        return UserError(f"{key}=null: {key} cannot be null", f"give {key} a value, or leave it out for its default")
    whole = isinstance(given, float) and math.isfinite(given) and kind == KINDS["to Integer"]
    example = f"{key}={round(given)}" if whole else f"give {key} {kind}"
    return UserError(f"{key}={given!r}: {key} takes {kind}", example)


def _missing_key(key: str, command: CommandLine, config_name: str) -> UserError:
    """A key the composed config does not have: the closest keys of its parent (for ``algo.*``, the
    algorithm constructor's arguments)."""
    override = command.given(key) or next((o for o in command.parsed if key.startswith(o.key_or_group)), None)
    if override is None:  # a key a config file of the user's names
        return UserError(f"{key} is not a key of rlrun's config", "`rlrun --cfg job` prints every key with its value")
    others = [first_value(o) for o in command.parsed if o is not override]
    base = _compose(config_name, others)
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(base, parent, default=None) if parent else base
    siblings = [str(k) for k in node] if isinstance(node, DictConfig) else []
    if parent == "algo" and "_target_" in siblings:
        return _not_an_argument(override, str(base.algo._target_))
    value = override.get_value_element_as_str()
    if parent.startswith("hydra") or not _in_schema(node):  # a free-form mapping, or Hydra's own keys
        close = difflib.get_close_matches(leaf, siblings, n=3, cutoff=0.6)
        meant = f" (did you mean {', '.join(f'{parent}.{c}' if parent else c for c in close)}?)" if close else ""
        owner = f"the {parent} config" if parent else "rlrun's config"
        return UserError(f"{key} is not a key of {owner}{meant}", f"+{text(override)} adds a key the config lacks")
    keys = list(_leaf_keys(base, ""))
    close = [k for k in keys if k.rsplit(".", 1)[-1] == leaf]  # a key given without its node: n_envs
    close = close or difflib.get_close_matches(
        key, [k for k in keys if k.rpartition(".")[0] == parent], n=2, cutoff=0.6
    )
    close = close or difflib.get_close_matches(key, keys, n=2)
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    fix = f"{close[0]}={value}" if close else "`rlrun --cfg job` prints every key with its value"
    return UserError(f"{key} is not a key of rlrun's config{meant}", fix)


def _in_schema(node: object) -> bool:
    """Whether a config node is one of rlrun's schema's dataclasses (not a free-form mapping of the files)."""
    return (
        isinstance(node, DictConfig)
        and inspect.isclass(OmegaConf.get_type(node))
        and OmegaConf.get_type(node) is not dict
    )


def _leaf_keys(node: DictConfig, prefix: str) -> Iterator[str]:
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
            yield from _leaf_keys(child, f"{prefix}{name}.")


def _not_an_argument(override: Override, target: str) -> UserError:
    """``algo.<name>=`` for a name the algorithm's file does not set: its constructor's closest arguments."""
    from hydra.utils import get_class

    from rlrun.checks.constructor import RUNTIME_ARGS

    key, value = override.key_or_group, override.get_value_element_as_str()
    leaf = key.split(".", 1)[1]
    cls = get_class(target)
    params = [p for p in inspect.signature(cls).parameters if p not in ("self", "kwargs", *RUNTIME_ARGS)]
    if leaf in params:
        return UserError(f"{key} is not set in the algo config", f"+{text(override)} adds it")
    close = difflib.get_close_matches(leaf, params, n=3, cutoff=0.6)
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    fix = f"algo.{close[0]}={value}" if close else f"{cls.__name__} takes: {', '.join(params)}"
    return UserError(f"{key} is not an argument of {cls.__name__}{meant}", fix)


def _composition_failed(error: Exception, command: CommandLine, config_name: str) -> UserError:
    """Any other refusal: Hydra's first line (and its cause's), and the fix for the override it names."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    problem = lines[0] if lines else type(error).__name__
    if error.__cause__ is not None:
        detail = next((line.strip() for line in str(error.__cause__).splitlines() if line.strip()), "")
        problem = f"{problem}: {detail}"
    named = [o for o in command.parsed if text(o) in str(error) or o.key_or_group in problem]
    for override in named:  # a group chosen with +, ++ or @: an option that does not exist is said first
        missing = [name for name in _strings(override.value()) if "." not in override.key_or_group]
        options = _options(override.key_or_group) if missing else []
        if options and (unknown := [name for name in missing if name not in options]):
            return _unknown_option(override.key_or_group, unknown[0], command, config_name)
    fix = _fix(named[0]) if named else None
    return UserError(f"the config cannot be composed: {problem}", fix or "`rlrun --cfg job` prints every key")


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
