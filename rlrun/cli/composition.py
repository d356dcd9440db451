"""The composition rlrun makes before Hydra's, for overrides the checks of :mod:`rlrun.cli.mistakes` cannot vouch
for: Hydra's compose API on the same configs, so that what Hydra would refuse is found here, before Hydra prints
anything, and said in rlrun's words (the closest keys; for ``algo.*``, the algorithm constructor's arguments).
"""

from __future__ import annotations

import difflib
import inspect
from pathlib import Path

from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf

from rlrun.cli import command_line
from rlrun.cli.command_line import CommandLine
from rlrun.config.errors import UserError

_ABSENT = object()


def _search_path(command: CommandLine) -> list[str]:
    """``hydra.searchpath`` with the user's ``--config-dir`` added (the compose API takes no ``--config-dir``;
    its files then count after rlrun's, not before them as in Hydra's own search path)."""
    given = next((o for o in command.parsed if o.key_or_group == "hydra.searchpath"), None)
    value = given.value() if given is not None else None
    paths = [str(p) for p in value] if isinstance(value, list) else []
    if command.config_dir:
        paths.insert(0, f"file://{Path(command.config_dir).resolve()}")
    return [f"hydra.searchpath=[{','.join(paths)}]"] if paths else []


def _first(override: Override) -> str:
    """An override with a sweep replaced by its first value: what one job composes."""
    if not override.is_sweep_override():
        return _text(override)
    return f"{override.get_key_element()}={next(iter(override.sweep_string_iterator()))}"


def check(command: CommandLine, config_name: str, unsure: list[Override]) -> None:
    """Compose the config as Hydra will (a sweep's first job); raise :class:`UserError` for what it refuses."""
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    plain = [o for o in command.parsed if o.key_or_group != "hydra.searchpath"]
    searchpath = _search_path(command)
    with initialize_config_module(command_line.CONFIG_MODULE, version_base="1.3"):
        try:
            compose(config_name, [*searchpath, *map(_first, plain)], return_hydra_config=True)
            return
        except HydraException as error:
            failure = error
        certain = [_first(o) for o in plain if o not in unsure]
        try:
            base = compose(config_name, [*searchpath, *certain], return_hydra_config=True)
        except HydraException as error:
            raise _translated(error, plain) from error
    for override in unsure:
        if override.is_add() or override.is_force_add() or override.is_delete():
            continue
        if OmegaConf.select(base, override.key_or_group, default=_ABSENT) is _ABSENT:
            raise _missing_key(override, base)
    raise _translated(failure, unsure) from failure


def _missing_key(override: Override, cfg: DictConfig) -> UserError:
    """A key the composed config does not have: for ``algo.*`` the algorithm's constructor names the closest."""
    key = override.key_or_group
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    siblings = [str(k) for k in node] if isinstance(node, DictConfig) else []
    if parent == "algo" and "_target_" in siblings:
        return _not_an_argument(override, str(cfg.algo._target_))
    close = difflib.get_close_matches(leaf, siblings, n=3, cutoff=0.6)
    meant = f" (did you mean {', '.join(f'{parent}.{c}' if parent else c for c in close)}?)" if close else ""
    owner = f"the {parent} config" if parent else "rlrun's config"
    return UserError(f"{key} is not a key of {owner}{meant}", f"+{_text(override)} adds a key the config does not have")


def _not_an_argument(override: Override, target: str) -> UserError:
    """``algo.<name>=`` for a name the algorithm's file does not set: its constructor's closest arguments."""
    from hydra.utils import get_class

    from rlrun.checks.constructor import RUNTIME_ARGS

    key, value = override.key_or_group, _text(override).split("=", 1)[1]
    leaf = key.split(".", 1)[1]
    cls = get_class(target)
    params = [p for p in inspect.signature(cls).parameters if p not in ("self", "kwargs", *RUNTIME_ARGS)]
    if leaf in params:
        return UserError(f"{key} is not set in the algo config", f"+{_text(override)} adds it")
    close = difflib.get_close_matches(leaf, params, n=3, cutoff=0.6)
    meant = f" (did you mean {', '.join(close)}?)" if close else ""
    fix = f"algo.{close[0]}={value}" if close else f"{cls.__name__} takes: {', '.join(params)}"
    return UserError(f"{key} is not an argument of {cls.__name__}{meant}", fix)


def _translated(error: Exception, overrides: list[Override]) -> UserError:
    """What Hydra's composition refused, in rlrun's words: the problem, and the fix for the override it names."""
    cause = error.__cause__
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    problem = lines[0] if lines else type(error).__name__
    if cause is not None:
        detail = next((line.strip() for line in str(cause).splitlines() if line.strip()), "")
        problem = f"{problem}: {detail}"
    named = [o for o in overrides if _text(o) in str(error) or o.key_or_group in problem]
    fix = _fix(named[0]) if named else None
    return UserError(
        f"the config cannot be composed: {problem}", fix or "`rlrun --cfg job` prints every key with its value"
    )


def _fix(override: Override) -> str | None:
    """The fix for an override of a shape Hydra refused: a group chosen with ``+``, ``++`` or ``@package`` where
    the defaults list already has it; a deletion; a value given to a group of keys."""
    key, line = override.key_or_group, _text(override)
    if "." not in key and (override.is_add() or override.is_force_add() or override.package is not None):
        return f"{key}={override.value()} (without + or @: the defaults list already has {key}, this picks its option)"
    if override.is_delete():
        return f"remove {line} (a key of rlrun's schema is set, not deleted; `rlrun --cfg job` lists the keys)"
    if "." not in key and not override.is_add():
        return f"{key} is a group of keys: set one of them, as {key}.<key>=... (`rlrun --cfg job` lists them)"
    return None


def _text(override: Override) -> str:
    return override.input_line or ""
