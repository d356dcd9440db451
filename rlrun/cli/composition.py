"""Hydra composes the command line's config before Hydra's own entry runs, and rlrun translates what it refuses.

The composition is Hydra's compose API on the same search path the run will use (:mod:`rlrun.cli.entry`), so
whatever Hydra would refuse (an unknown option or key, a value of the wrong type, a malformed config file, an
override of the wrong shape) is found here, before anything is created, and said in rlrun's words with the
closest names and a fix: exit status 2, no traceback. A sweep composes its first job, and each option of a config
group it sweeps. A whole float given to an integer key (``total_timesteps=1e4``) is rewritten as the integer.
"""

from __future__ import annotations

import yaml
from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException, MissingConfigException
from omegaconf import DictConfig
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException, ValidationError

from rlrun.cli.command_line import CommandLine, first_value, text, values
from rlrun.config import hydra_errors
from rlrun.config.errors import UserError
from rlrun.config.user_configs import BUNDLED


def compose_checked(command: CommandLine, config_name: str) -> tuple[CommandLine, DictConfig]:
    """The command line Hydra is to read (whole floats rewritten) and its (first job's) config, Hydra's node
    included; raise :class:`UserError` for what Hydra refuses."""
    with initialize_config_module(BUNDLED, version_base="1.3"):
        for _ in range(len(command.parsed) + 1):  # each rewrite makes one override whole
            try:
                return command, _compose_jobs(command, config_name)
            except yaml.YAMLError as error:  # a config file of the user's that is not YAML, as Hydra read it
                raise hydra_errors.not_yaml(error, command.config_dir) from None
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
        if (
            override.is_sweep_override()
            and first[i] != text(override)
            and _options(override.key_or_group, command, config_name)
        ):
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
    return str(int(number)) if number.is_integer() else None


def _translated(error: Exception, command: CommandLine, config_name: str) -> UserError:
    """What Hydra refused, in rlrun's words (:mod:`rlrun.config.hydra_errors`)."""
    cause = error.__cause__
    if isinstance(error, MissingConfigException):
        group, _, name = str(error.missing_cfg_file).rpartition("/")
        if not group:
            return UserError(f"no config named {name!r} (--config-name)", "leave out --config-name, or name one")
        return hydra_errors.unknown_option(group, name, _options(group, command, config_name), command.given(group))
    wrong_type = any(words in str(cause) for words in (*hydra_errors.KINDS, "is not Optional"))
    if isinstance(cause, ValidationError) and wrong_type and (override := command.given(str(cause.full_key))):
        given = next(iter(override.sweep_iterator())) if override.is_sweep_override() else override.value()
        return hydra_errors.wrong_type(str(cause.full_key), str(cause), given, hydra_errors.current_value(cause))
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and cause.full_key:
        key = str(cause.full_key)
        override = command.given(key) or next((o for o in command.parsed if key.startswith(o.key_or_group)), None)
        if override is not None:
            base = _compose(config_name, [first_value(o) for o in command.parsed if o is not override])
            return hydra_errors.missing_key(key, override, base)
    named = [o for o in command.parsed if text(o) in str(error) or o.key_or_group in str(error)]
    for override in named:  # a group chosen with +, ++ or @: an option that does not exist is said first
        group = override.key_or_group
        options = _options(group, command, config_name) if "." not in group else []
        unknown = [name for name in hydra_errors.names(override.value()) if options and name not in options]
        if unknown:
            return hydra_errors.unknown_option(group, unknown[0], options, override)
    return hydra_errors.not_composed(error, named[0] if named else None)


def _options(group: str, command: CommandLine, config_name: str) -> list[str]:
    """The options of a config group Hydra finds (with the command line's ``hydra.searchpath``, when given)."""
    loader = GlobalHydra.instance().config_loader()
    given = command.given("hydra.searchpath")
    try:
        return sorted(
            loader.get_group_options(group, config_name=config_name, overrides=[text(given)] if given else [])
        )
    except HydraException:  # the primary config is not there to read hydra.searchpath from
        return sorted(loader.get_group_options(group))
