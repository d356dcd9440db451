"""The signing key is checked before a run folder is created (rlrun.record.signatures.check_key): a key path
that names a folder, or one that cannot be created, is a user mistake naming RLRUN_TRUST_KEY (exit 2)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import forked_commands

RUN = ["env=gridworld", "algo=ppo", "total_timesteps=64", "progress_bar=false"]


def rlrun(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun", *RUN], cwd=cwd, env=env, timeout=300)


def without_key_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("RLRUN_TRUST_KEY", "XDG_CONFIG_HOME")}


@pytest.mark.parametrize(
    "where",
    ["folder", "uncreatable", "home-unwritable"],
)
def test_a_key_that_cannot_be_read_or_created_refuses_the_run_before_its_folder(tmp_path: Path, where: str) -> None:
    env = without_key_settings()
    if where == "folder":
        (tmp_path / "keys").mkdir()
        env["RLRUN_TRUST_KEY"] = str(tmp_path / "keys")
    elif where == "uncreatable":
        (tmp_path / "a-file").write_text("")
        env["RLRUN_TRUST_KEY"] = str(tmp_path / "a-file" / "sub" / "trust.key")  # a folder inside a file
    else:
        (tmp_path / "home").write_text("")  # HOME is a file: ~/.config cannot be made (root writes any folder)
        env["HOME"] = str(tmp_path / "home")
    work = tmp_path / "work"
    work.mkdir()

    result = rlrun(work, env)

    assert result.returncode == 2, result.stderr
    assert "RLRUN_TRUST_KEY" in result.stderr and "Traceback" not in result.stderr
    assert not (work / "outputs").exists()  # no run folder, no run.json left "running"


def test_a_key_that_can_be_created_lets_the_run_start(tmp_path: Path) -> None:
    env = {**without_key_settings(), "RLRUN_TRUST_KEY": str(tmp_path / "new" / "trust.key")}
    result = rlrun(tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "trust.key").stat().st_size == 32
