"""``rlrun-table`` on the command line (rlrun/cli/table.py): exit statuses, messages, the printed table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.cli.table import main
from tests.rlrun.table.helpers import make_run


def test_folder_without_runs_and_several_folders_without_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    (empty / "nested").mkdir(parents=True)
    make_run(tmp_path / "full/seed-0", 0, 1.0)
    for argv, message in (
        ([str(empty)], f"{empty}: no runs found"),
        ([str(tmp_path / "full"), str(empty), "--out", str(tmp_path / "o")], f"{empty}: no runs found"),
        ([str(tmp_path / "full"), str(tmp_path / "full")], "--out DIR"),
        ([str(tmp_path / "missing")], "no such folder"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_command_line_prints_the_table(tmp_path: Path) -> None:
    for seed in range(2):
        make_run(tmp_path / f"runs/seed-{seed}", seed, 100.0 + seed)
    done = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.table", str(tmp_path / "runs"), "--metric", "success"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| `cartpole-ppo` | 2/2 | 100.5 ± 0.5 |" in done.stdout and "wrote table.md" in done.stdout
    assert (tmp_path / "runs/curves.png").is_file()
