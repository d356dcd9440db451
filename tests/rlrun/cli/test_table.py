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


def test_out_naming_a_file_and_a_group_compared_with_itself_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in range(2):
        make_run(tmp_path / f"runs/seed-{seed}", seed, 1.0 + seed)
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd/table.md").mkdir()
    runs = str(tmp_path / "runs")
    for argv, message in (
        ([runs, "--out", str(taken)], f"--out {taken} is an existing file, not a folder for the table files"),
        ([runs, "--out", str(taken / "sub")], f"--out {taken / 'sub'} lies under {taken}, which is an existing file"),
        ([runs, "--out", str(tmp_path / "odd")], "holds table.md as something other than a file"),
        ([runs, "--compare", "cartpole-ppo", "cartpole-ppo"], "a group compared with itself always gives 0.5"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2, argv
        err = capsys.readouterr().err
        assert message in err and "fix:" in err, err
    assert taken.read_text() == "mine" and [p.name for p in (tmp_path / "odd").iterdir()] == ["table.md"]
    assert not (tmp_path / "runs/table.md").exists()  # refused before anything was written
