"""Argument and action checks (``envs/checks.py``)."""

from typing import Any

import numpy as np
import pytest
from rlrun.envs import checks


@pytest.mark.parametrize("value", [1, 0.5, np.float32(2.0), np.int64(3)])
def test_positive_number_accepts_numbers(value: Any) -> None:
    assert checks.positive_number("x", value) == float(value)
    assert isinstance(checks.positive_number("x", value), float)


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "1", None, True, np.bool_(True), [1.0]])
def test_positive_number_rejects_the_rest(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^x must be a finite number"):
        checks.positive_number("x", value)


def test_non_negative_number_accepts_zero() -> None:
    assert checks.non_negative_number("x", 0) == 0.0
    with pytest.raises(ValueError, match=r"^x must be a finite number >= 0, got -0.5"):
        checks.non_negative_number("x", -0.5)


@pytest.mark.parametrize("value", [(1, 2), [1.5, -2.0], np.array([1.0, 2.0], dtype=np.float32)])
def test_planar_point(value: Any) -> None:
    assert checks.planar_point("p", value) == (float(value[0]), float(value[1]))


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (np.array([0.5, -0.25], dtype=np.float32), (0.5, -0.25)),
        (np.array([3.0, -7.0], dtype=np.float64), (1.0, -1.0)),
        ([2, 0], (1.0, 0.0)),
        ((0.1, 0.2), (0.1, 0.2)),
    ],
    ids=["float32", "clipped", "int-list", "tuple"],
)
def test_planar_action(action: Any, expected: tuple[float, float]) -> None:
    assert checks.planar_action(action) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("action", "expected"), [(0, 0), (np.int64(3), 3), (np.uint8(2), 2), (np.array(1), 1), (np.int32(1), 1)]
)
def test_discrete_action(action: Any, expected: int) -> None:
    result = checks.discrete_action(action, ("a", "b", "c", "d"))
    assert result == expected and type(result) is int


def test_discrete_action_error_lists_the_actions() -> None:
    with pytest.raises(ValueError, match=r"^invalid action 5: expected an integer in \[0, 1\] \(0: stay, 1: go\)$"):
        checks.discrete_action(5, ("stay", "go"))
