"""Validation of constructor arguments and actions, shared by the rlrun envs.

Every check raises a ``ValueError`` that names the argument (or the action) and the bad value, so a typo in a
YAML file or a broken policy is reported in words a user can act on. The action checks sit on the hot path of
``step`` and are written for speed: plain Python floats and ints, no temporary arrays on the common path.
"""

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np


def real_number(name: str, value: Any) -> float:
    """Return ``value`` as a finite float; reject booleans, non-numbers, NaN and infinities."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def positive_number(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is finite and strictly positive."""
    number = real_number(name, value)
    if number <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def non_negative_number(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is finite and not negative."""
    number = real_number(name, value)
    if number < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def planar_point(name: str, value: Any) -> tuple[float, float]:
    """Return a pair of finite floats from a sequence or array of shape ``(2,)``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be two finite numbers (x, y), got {value!r}") from None
    if array.shape != (2,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be two finite numbers (x, y), got {value!r}")
    x, y = array.tolist()
    return x, y


def planar_action(action: Any) -> tuple[float, float]:
    """Return a 2D continuous action as two Python floats, each clipped to [-1, 1].

    Actions outside the box are clipped (as SB3 does for its own policies); an action of another shape or with
    a NaN or infinite component raises ``ValueError``, since no clipping could make sense of it.
    """
    if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":
        ax, ay = action.tolist()
    else:
        try:
            array = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"action must be an array of shape (2,), got {action!r}") from None
        if array.shape != (2,):
            raise ValueError(f"action must be an array of shape (2,), got shape {array.shape}: {action!r}")
        ax, ay = array.tolist()
    if not (math.isfinite(ax) and math.isfinite(ay)):
        raise ValueError(f"action must be finite, got {action!r}")
    ax = -1.0 if ax < -1.0 else (1.0 if ax > 1.0 else ax)
    ay = -1.0 if ay < -1.0 else (1.0 if ay > 1.0 else ay)
    return ax, ay


def discrete_action(action: Any, names: Sequence[str]) -> int:
    """Return a discrete action as an int in ``[0, len(names))``; ``names`` label the actions in the error."""
    is_integer = isinstance(action, int | np.integer) and not isinstance(action, bool)
    if not is_integer and isinstance(action, np.ndarray):
        is_integer = action.shape == () and action.dtype.kind in "iu"  # a 0-d integer array
    index = int(action) if is_integer else -1
    if not 0 <= index < len(names):
        labels = ", ".join(f"{i}: {name}" for i, name in enumerate(names))
        raise ValueError(f"invalid action {action!r}: expected an integer in [0, {len(names) - 1}] ({labels})")
    return index
