"""RL Baselines3 Zoo's hyperparameter values as rlrun config values, and the YAML text of a preset.

The Zoo's YAML holds Python in strings (``"dict(net_arch=[64, 64], activation_fn=nn.ReLU)"``) that its
``ExperimentManager`` runs through ``eval``; here each string is parsed with :mod:`ast` and only literals, ``dict(...)``
calls and a few known class names are accepted, so nothing of the Zoo's is ever run. What cannot be converted raises
:class:`Unconvertible` with the reason, for the converter to list.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

LINEAR_SCHEDULE = "stable_baselines3.common.utils.LinearSchedule"
GET_CLASS = "hydra.utils.get_class"
# Names the Zoo's Python strings use for classes, and where they live (the Zoo imports them into its namespace).
CLASSES = {
    "RMSpropTFLike": "stable_baselines3.common.sb2_compat.rmsprop_tf_like.RMSpropTFLike",
    "HerReplayBuffer": "stable_baselines3.HerReplayBuffer",
}
NOISE = {
    "normal": "stable_baselines3.common.noise.NormalActionNoise",
    "ornstein-uhlenbeck": "stable_baselines3.common.noise.OrnsteinUhlenbeckActionNoise",
}


class Unconvertible(ValueError):
    """A Zoo value with no rlrun equivalent; the message says why."""


def schedule(value: Any) -> Any:
    """``lin_0.001`` -> SB3's ``LinearSchedule`` from 0.001 to 0 over the run (the Zoo's ``SimpleLinearSchedule``);
    any other value unchanged."""
    if not isinstance(value, str) or not value.startswith("lin_"):
        return value
    try:
        start = float(value.removeprefix("lin_"))
    except ValueError:
        raise Unconvertible(f"{value!r} is not lin_<number>") from None
    return {"_target_": LINEAR_SCHEDULE, "start": start, "end": 0.0, "end_fraction": 1.0}


def get_class(path: str) -> dict[str, str]:
    """A class as rlrun's configs give one: instantiated by Hydra into the class itself."""
    return {"_target_": GET_CLASS, "path": path}


def _literal(node: ast.expr) -> Any:
    """One node of a Zoo Python string as plain data; classes as :func:`get_class` nodes."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        number = node.operand.value
        if isinstance(number, (int, float)):
            return -number
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise Unconvertible("a ** expansion in a dict")
        return {_literal(key): _literal(value) for key, value in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        if any(keyword.arg is None for keyword in node.keywords):
            raise Unconvertible("a ** expansion in dict(...)")
        return {keyword.arg: _literal(keyword.value) for keyword in node.keywords}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("nn", "th", "torch"):
        return get_class(f"torch.nn.{node.attr}")  # nn.ReLU, nn.GELU, nn.Tanh
    if isinstance(node, ast.Name) and node.id in CLASSES:
        return get_class(CLASSES[node.id])
    raise Unconvertible(f"{ast.unparse(node)!r} is not a literal, dict(...) or a known class")


def python_value(text: str) -> Any:
    """A Zoo Python string (``"dict(net_arch=[64, 64], activation_fn=nn.ReLU)"``) as plain data, never run."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise Unconvertible(f"{text!r} is not Python: {error.msg}") from None
    return _literal(tree.body)


def kwargs_value(value: Any) -> Any:
    """``policy_kwargs`` or ``replay_buffer_kwargs``: a Python string parsed, a YAML mapping kept."""
    parsed = python_value(value) if isinstance(value, str) else value
    if not isinstance(parsed, dict):
        raise Unconvertible(f"{value!r} is not a mapping")
    return parsed


def normalize(value: Any) -> dict[str, bool]:
    """The Zoo's ``normalize`` (``true``, or a dict or dict string of VecNormalize's arguments) as ``env.normalize``.

    ``true`` is VecNormalize's defaults: observations and rewards. Arguments other than ``norm_obs`` and
    ``norm_reward`` are unconvertible (rlrun's ``env.normalize`` has only those two; its gamma is ``algo.gamma``).
    """
    if isinstance(value, bool):
        return {"obs": value, "reward": value}
    given = python_value(value) if isinstance(value, str) else value
    if not isinstance(given, dict):
        raise Unconvertible(f"normalize={value!r} is neither a bool nor a mapping")
    others = sorted(set(given) - {"norm_obs", "norm_reward"})
    if others:
        raise Unconvertible(f"normalize={value!r}: env.normalize has no {', '.join(others)}")
    return {"obs": bool(given.get("norm_obs", True)), "reward": bool(given.get("norm_reward", True))}


def action_noise(noise_type: str, noise_std: float, n_actions: int) -> dict[str, Any]:
    """The Zoo's ``noise_type`` and ``noise_std`` as an SB3 action-noise node for ``n_actions`` action dimensions
    (the Zoo's: mean 0, the same standard deviation on every dimension)."""
    kind = noise_type.strip()
    if kind not in NOISE:
        raise Unconvertible(f"noise_type={noise_type!r} is not one of {', '.join(NOISE)}")
    std = float(noise_std)
    if kind == "normal":
        return {"_target_": NOISE[kind], "mean": [0.0] * n_actions, "sigma": [std] * n_actions}
    # Ornstein-Uhlenbeck noise does arithmetic on its arrays' shapes: numpy arrays, not lists
    return {
        "_target_": NOISE[kind],
        "mean": {"_target_": "numpy.zeros", "shape": [n_actions]},
        "sigma": {"_target_": "numpy.full", "shape": [n_actions], "fill_value": std},
    }


def yaml_scalar(value: Any) -> str:
    """A scalar (or a flat list) as YAML text that PyYAML and OmegaConf read back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"  # YAML 1.1 floats need the dot: 1.0e-05, not 1e-05
        return text
    if isinstance(value, list):
        return "[" + ", ".join(yaml_scalar(item) for item in value) + "]"
    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-/]*", value)
        special = value.lower() in ("true", "false", "yes", "no", "on", "off", "null", "y", "n", "~")
        return value if plain and not special else json.dumps(value)
    raise TypeError(f"cannot write {value!r} as a YAML scalar")


def yaml_text(tree: dict[str, Any], comments: dict[str, str], indent: int = 0, prefix: str = "") -> list[str]:
    """Block-style YAML lines of ``tree``; ``comments`` maps a dotted key to its one-line comment."""
    lines: list[str] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        comment = f"  # {comments[path]}" if path in comments else ""
        head = " " * indent + f"{key}:"
        if isinstance(value, dict) and value:
            lines.append(head + comment)
            lines += yaml_text(value, comments, indent + 2, path + ".")
        elif isinstance(value, dict):
            lines.append(f"{head} {{}}{comment}")
        else:
            lines.append(f"{head} {yaml_scalar(value)}{comment}")
    return lines
