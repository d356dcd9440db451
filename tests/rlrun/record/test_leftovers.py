"""What Hydra leaves of a run that never started is removed; anything else, and what was there before, stays."""

from __future__ import annotations

from pathlib import Path

from rlrun.record.leftovers import remove_leftovers


def hydra_made(folder: Path) -> Path:
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "config.yaml").write_text("seed: 0\n")
    (folder / "rlrun.log").write_text("")
    return folder


def test_a_folder_hydra_made_is_removed_whole(tmp_path: Path) -> None:
    assert remove_leftovers(hydra_made(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_a_run_that_started_or_wrote_anything_else_is_kept(tmp_path: Path) -> None:
    started = hydra_made(tmp_path / "started")
    (started / "run.json").write_text("{}")
    other = hydra_made(tmp_path / "other")
    (other / "notes.txt").write_text("mine")
    for folder in (started, other):
        assert not remove_leftovers(folder)
        assert (folder / ".hydra" / "config.yaml").is_file() and (folder / "rlrun.log").is_file()
    assert not remove_leftovers(tmp_path / "missing")


def test_what_the_folder_held_before_stays_and_so_does_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "old.log").write_text("the user's")
    hydra_made(folder)
    assert not remove_leftovers(folder, before={"old.log"})
    assert [p.name for p in folder.iterdir()] == ["old.log"]
    empty = tmp_path / "empty"
    empty.mkdir()
    hydra_made(empty)
    assert not remove_leftovers(empty, before=set())
    assert empty.is_dir() and not any(empty.iterdir())
