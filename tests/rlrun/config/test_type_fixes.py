"""A value of the wrong type gets a fix that is an override, as every other mistake does: the key's value without the
refused one (``seed=abc`` -> ``fix: seed=0``), not words to act on."""

from __future__ import annotations

import pytest

from rlrun.cli import entry
from rlrun.config.errors import UserError


@pytest.mark.parametrize(
    ("given", "fix"),
    [
        ("seed=abc", "seed=0"),
        ("check_nan=maybe", "check_nan=false"),
        ("env=cartpole total_timesteps=abc", "total_timesteps=50000"),  # the preset's value
        ("eval.episodes=x", "eval.episodes=5"),
    ],
)
def test_a_wrong_type_is_fixed_by_an_override(given: str, fix: str) -> None:
    with pytest.raises(UserError) as refused:
        entry.checked(given.split(), "config")
    assert refused.value.fix == fix
