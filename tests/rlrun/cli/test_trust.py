"""``rlrun-trust`` shows what a folder will run before it signs, asks on a terminal (``--yes`` without one), and
refuses a key file that others can read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from rlrun.config.errors import UserError
from rlrun.record import signatures
from tests import forked_commands
from tests.rlrun.helpers import run_folder

REPO = Path(__file__).resolve().parents[3]


def received(tmp_path: Path) -> Path:
    """A received folder whose config names an entry point, a wrapper of its own and a package."""
    folder = run_folder(tmp_path / "run", signed=False)
    config = yaml.safe_load((folder / "config.yaml").read_text())
    config["env"] = {"id": "evilpkg:Evil-v0", "packages": ["evilpkg.register"]}
    config["wrappers"]["own"] = {"_target_": "hydra.utils.get_class", "path": "evilpkg.Wrap"}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    return folder


def trust(args: list[str], stdin: int | None = subprocess.DEVNULL, env: dict | None = None):
    return forked_commands.Popen(
        ["-m", "rlrun.cli.trust", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )


def test_without_a_terminal_it_lists_what_will_run_and_signs_nothing_unless_yes(tmp_path: Path) -> None:
    folder = received(tmp_path)
    out, err = trust([str(folder)]).communicate(timeout=60)
    for item in (
        "snapshots/step-0000000256/state.pkl",
        "_target_: rlrun.envs.wrappers.ScaleReward",
        "hydra.utils.get_class(evilpkg.Wrap)",
        "wrapper: own",
        "entry point: imports evilpkg",
        "env.packages: imports evilpkg.register",
    ):
        assert item in out, out
    assert "no terminal" in err and "--yes" in err and "Traceback" not in err
    assert not (folder / signatures.RUN_MANIFEST).exists()
    process = trust([str(folder), "--yes"])
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and f"trusted {folder} (1 snapshot)" in out
    signatures.check_folder(folder, "test")


@pytest.mark.parametrize("answer, signed", [("n", False), ("y", True)])
def test_on_a_terminal_it_asks_first(tmp_path: Path, answer: str, signed: bool) -> None:
    folder = received(tmp_path)
    leader, follower = os.openpty()
    process = trust([str(folder)], stdin=follower)
    os.write(leader, f"{answer}\n".encode())
    out, _ = process.communicate(timeout=60)
    os.close(leader)
    os.close(follower)
    assert "Trust this folder? [y/N]" in out and "entry point: imports evilpkg" in out
    assert process.returncode == (0 if signed else 1) and (folder / signatures.RUN_MANIFEST).exists() == signed


def test_a_key_file_others_can_read_is_refused_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tmp_path / "trust.key"
    monkeypatch.setenv(signatures.KEY_ENV, str(key))
    signatures.signed({})  # created 0600
    key.chmod(0o644)
    with pytest.raises(UserError, match="can be read or written by others") as refused:
        signatures.signed({})
    assert f"chmod 600 {key}" in str(refused.value)
    folder = received(tmp_path)
    process = trust([str(folder), "--yes"], env={**os.environ, signatures.KEY_ENV: str(key)})
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and f"chmod 600 {key}" in err and "will run" not in out
    assert not (folder / signatures.RUN_MANIFEST).exists()


@pytest.mark.parametrize("kind", ["fifo", "hard link"])
@pytest.mark.parametrize("name", ["run.json", "config.yaml"])
def test_a_folder_holding_a_fifo_or_a_hard_link_is_refused_at_once_and_never_signed(
    tmp_path: Path, name: str, kind: str
) -> None:
    folder = run_folder(tmp_path / "run", signed=False)
    if kind == "fifo":
        (folder / name).unlink()
        os.mkfifo(folder / name)
    else:
        os.link(folder / name, tmp_path / "outside")
    process = trust([str(folder), "--yes"])
    _, err = process.communicate(timeout=60)  # the hang guard: a FIFO read would wait for ever
    assert process.returncode == 2 and "Traceback" not in err, err
    assert f"which rlrun never reads or writes: {name}" in err, err
    assert not (folder / signatures.RUN_MANIFEST).exists()
