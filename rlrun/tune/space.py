"""Search spaces for ``rlrun-tune``: read the ``search_space`` group, check every entry, sample values.

A search space maps a dotted config key to its distribution (DESIGN.md, "Search spaces"). Each entry is
checked before anything is trained or written: its fields, then its key and every value it can take
against the composed config and the SB3 constructor (:func:`check_against`). Optuna sees categorical
choices that are lists or mappings by their override text (``"[64, 64]"``), so studies stay storable.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import optuna
from omegaconf import DictConfig, OmegaConf

from rlrun.config.errors import Problem, UserError, raise_if
from rlrun.config.keys import is_training_key, override_value

FIELDS = {"float": ("low", "high", "log"), "int": ("low", "high", "step", "log"), "categorical": ("choices",)}
EXAMPLE = "e.g. algo.learning_rate: {type: float, low: 1.0e-5, high: 1.0e-2, log: true}"
SCALARS = (type(None), bool, int, float, str)
FLOAT_DIGITS = 4  # significant digits of a sampled float: readable overrides, and far finer than RL's noise


@dataclass(frozen=True)
class Param:
    """One entry of the search space: the config key, Optuna's distribution and the YAML choices."""

    key: str
    distribution: optuna.distributions.BaseDistribution
    choices: tuple[Any, ...] = ()  # categorical: the values as written in YAML, in order

    def suggest(self, trial: optuna.Trial) -> Any:
        """Sample (or, for an enqueued trial, read) this entry's value; returns the config value."""
        d = self.distribution
        if isinstance(d, optuna.distributions.FloatDistribution):  # trained as written: 4 significant digits
            return float(f"{trial.suggest_float(self.key, d.low, d.high, log=d.log):.{FLOAT_DIGITS}g}")
        if isinstance(d, optuna.distributions.IntDistribution):
            return trial.suggest_int(self.key, d.low, d.high, step=d.step, log=d.log)
        assert isinstance(d, optuna.distributions.CategoricalDistribution)
        return self.value(trial.suggest_categorical(self.key, d.choices))

    def value(self, label: Any) -> Any:
        """The config value of an Optuna parameter value (a choice's label becomes the choice)."""
        if self.choices and not all(isinstance(c, SCALARS) for c in self.choices):
            return self.choices[[override_value(c) for c in self.choices].index(label)]
        return label

    def candidates(self) -> list[Any]:
        """The values checked before training: both bounds, or every choice."""
        d = self.distribution
        return list(self.choices) if self.choices else [d.low, d.high]  # type: ignore[attr-defined]


def override(cfg: DictConfig, key: str, value: Any) -> str:
    """The override that sets ``key``: plain where the composed config has the key, ``++`` where it adds one
    (e.g. ``algo.policy_kwargs.net_arch`` when ``policy_kwargs`` is null)."""
    return f"{'' if _has(cfg, key) else '++'}{key}={override_value(value)}"


def _has(cfg: DictConfig, key: str) -> bool:
    node: Any = cfg
    for part in key.split("."):
        if not isinstance(node, DictConfig) or part not in node:
            return False
        node = node[part]
    return True


def parse_space(space: Any, source: str) -> list[Param]:
    """Every entry of ``space`` as a :class:`Param`; raises one :class:`UserError` listing all bad entries."""
    if space is None or (isinstance(space, Mapping) and not space):
        raise UserError(
            f"the search space {source} is empty or missing",
            "add conf/search_space/<algo>.yaml (or your own with --config-dir) and choose it with search_space=NAME",
        )

    params, problems = [], []
    for key, entry in space.items():
        try:
            params.append(_param(str(key), entry))
        except UserError as error:
            problems.append((error.problem, error.fix or ""))
    raise_if([(f"search space {source}: {problem}", fix) for problem, fix in problems])
    return params


def _param(key: str, entry: Any) -> Param:
    """One entry, its fields checked with a message that names the entry and the fix."""
    where = f"entry {key}"
    if not isinstance(entry, Mapping) or "type" not in entry:
        raise UserError(f"{where} must be a mapping with a type", f"write it as {EXAMPLE}")
    kind = entry["type"]
    if kind not in FIELDS:
        raise UserError(f"{where}: unknown type {kind!r}", f"use one of {', '.join(FIELDS)} ({EXAMPLE})")
    unknown = [name for name in entry if name not in ("type", *FIELDS[kind])]
    if unknown:
        fields = ", ".join(FIELDS[kind])
        raise UserError(f"{where}: {', '.join(unknown)} is not a field of a {kind} entry", f"its fields are {fields}")
    if kind == "categorical":
        choices = entry.get("choices")
        if not isinstance(choices, list) or not choices:
            raise UserError(f"{where}: choices must be a non-empty list", "list the values, e.g. choices: [64, 128]")
        scalar = all(isinstance(c, SCALARS) for c in choices)
        labels = choices if scalar else [override_value(c) for c in choices]
        if len(set(map(json.dumps, labels))) < len(labels):
            raise UserError(f"{where}: choices repeat a value", "list each value once")
        return Param(key, optuna.distributions.CategoricalDistribution(labels), tuple(choices))
    return Param(key, _range(where, kind, entry))


def _range(where: str, kind: str, entry: Mapping[str, Any]) -> optuna.distributions.BaseDistribution:
    """A float or int distribution, its bounds, step and log scale checked."""
    number = int if kind == "int" else (int, float)
    values = {name: entry.get(name, default) for name, default in (("low", None), ("high", None), ("step", 1))}
    for name, value in values.items():
        if not isinstance(value, number) or isinstance(value, bool) or not math.isfinite(value):
            raise UserError(f"{where}: {name}={value!r} must be a finite {kind} number", f"set {name} to a {kind}")
    low, high, step, log = values["low"], values["high"], values["step"], entry.get("log", False)
    if not isinstance(log, bool):
        raise UserError(f"{where}: log={log!r} must be true or false", "set log: true or leave it out")
    if low > high:
        raise UserError(f"{where}: low={low} > high={high}", f"swap them: low: {high}, high: {low}")
    if log and low <= 0:
        raise UserError(f"{where}: log scale needs low > 0 (low={low})", "raise low above 0, or drop log: true")
    if step < 1:
        raise UserError(f"{where}: step={step} must be 1 or more", "set step to a positive integer")
    if log and step != 1:
        raise UserError(f"{where}: a log scale cannot have step={step}", "drop step or log: true")
    if kind == "int":
        return optuna.distributions.IntDistribution(low, high, log=log, step=step)
    return optuna.distributions.FloatDistribution(float(low), float(high), log=log)


def check_against(params: list[Param], cfg: DictConfig) -> None:
    """Every key is one the composed config trains with, and every value it can take is one that config
    (types by schema, ranges by :mod:`rlrun.checks.rules`) and the SB3 constructor accept."""
    from rlrun.make import models

    algo_cls = models.model_class(cfg)  # the class the run trains, whose constructor takes the values (SBX's with jax)
    problems: list[Problem] = []
    for param in params:
        if bad_key := _key_problems(param.key, cfg):
            problems += bad_key
            continue
        for value in param.candidates():
            found = _value_problems(cfg, param.key, value, algo_cls)
            problems += [(f"search space entry {param.key}: {problem}", fix) for problem, fix in found]
    raise_if(list(dict.fromkeys(problems)))  # both bounds of a range may say the same


def _key_problems(key: str, cfg: DictConfig) -> list[Problem]:
    """A key rlrun-tune cannot tune: not trained on, or not in the config (free-form nodes excepted)."""
    where = f"search space entry {key}"
    if not is_training_key(key) or key.split(".")[0] == "search_space":
        return [(f"{where}: {key} does not change what is trained", "remove the entry (rlrun-tune sets the seeds)")]
    head = key.split(".")[0]
    if head == "algo" or key.startswith("env.kwargs.") or _has(cfg, key):
        return []  # algo.* is checked against the SB3 constructor below; env.kwargs by building the env
    return [(f"{where}: {key} is not a key of the config", "use a dotted key of `rlrun --cfg job`, e.g. algo.gamma")]


def _value_problems(cfg: DictConfig, key: str, value: Any, algo_cls: type) -> list[Problem]:
    """What is wrong with the config once ``key`` is set to ``value``, beyond what was already wrong."""
    from rlrun.make import vec_envs
    from rlrun.run import dry_run

    try:
        OmegaConf.update(copy.deepcopy(cfg), key, value, force_add=True)  # the schema checks the value's type
    except Exception as error:
        return [(f"{value!r} does not fit the config ({type(error).__name__})", f"give {key} values of its type")]
    trial = OmegaConf.create(OmegaConf.to_container(cfg))  # untyped, so that a new nested key can be added
    assert isinstance(trial, DictConfig)
    OmegaConf.update(trial, key, value, force_add=True)
    before = set(_problems(cfg, algo_cls))
    problems = [problem for problem in _problems(trial, algo_cls) if problem not in before]
    if problems:
        return problems
    if key.startswith("env."):
        try:
            vec_envs.make_env(trial).close()  # e.g. an env.kwargs entry the env's constructor does not take
        except Exception as error:
            return [(f"{value!r}: the env cannot be built: {type(error).__name__}: {error}", "change the entry")]
    if key.startswith("algo.") and key.count(".") > 1:  # inside an argument (policy_kwargs): SB3 decides
        return dry_run.model_problems(trial)
    return []


def _problems(cfg: DictConfig, algo_cls: type) -> list[Problem]:
    from rlrun.checks import constructor, rules

    return rules.range_problems(cfg) + constructor.algo_problems(cfg, algo_cls)
