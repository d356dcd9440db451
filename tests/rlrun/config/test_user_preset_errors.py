"""A user's preset (``--config-dir`` with ``env/x.yaml``, ``algo/x.yaml``) holding a value of the wrong type or a list
where a mapping belongs is refused in rlrun's words, naming the file and the key (issue 48; was Hydra's
``ValidationError raised while composing config`` with the fix for an override of a group)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlrun.cli import entry
from rlrun.config.errors import UserError


@pytest.mark.parametrize(
    ("group", "text", "choice", "problem", "fix"),
    [
        (
            "env",
            "# mine\ndefaults:\n  - gridworld\n  - _self_\nn_envs: two\n",
            "env=mine",
            "env/mine.yaml sets env.n_envs='two', but env.n_envs takes a whole number",
            "give n_envs a whole number in env/mine.yaml (in your --config-dir)",
        ),
        (
            "algo",
            "- 1\n- 2\n",
            "algo=mine",
            "algo/mine.yaml holds a list, but an option of algo/ is a mapping of keys (key: value lines)",
            "write algo/mine.yaml as key: value lines",
        ),
    ],
    ids=["wrong-type", "list-not-mapping"],
)
def test_a_preset_of_the_wrong_shape_is_said_with_its_file_and_key(
    tmp_path: Path, group: str, text: str, choice: str, problem: str, fix: str
) -> None:
    (tmp_path / group).mkdir()
    (tmp_path / group / "mine.yaml").write_text(text)
    with pytest.raises(UserError) as refused:
        entry.checked(["--config-dir", str(tmp_path), choice], "config")
    assert refused.value.problem == problem
    assert str(refused.value.fix).startswith(fix)
    assert "raised while composing" not in str(refused.value) and "group of keys" not in str(refused.value)
