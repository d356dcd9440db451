"""A run folder's files are read and written only as regular files with one name: a hard link to a file of the
user's is never written through, a FIFO or a device is never waited on. Each FIFO case runs in a subprocess with a
timeout (the hang guard): a reader that waits on it fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rlrun.record import formats, lock, reading, regular_files, signatures
from tests import forked_commands

OUTSIDE = "precious\n"
HANG_GUARD_S = 60


def outside_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_text(OUTSIDE)
    return path


def test_a_hard_linked_lock_is_never_written(tmp_path: Path) -> None:
    outside = outside_file(tmp_path)
    (tmp_path / "run").mkdir()
    os.link(outside, tmp_path / "run" / lock.LOCK_NAME)
    with pytest.raises(regular_files.NotRegularFile, match=r"hard link \(2 names"):
        lock.acquire(tmp_path / "run")
    assert outside.read_text() == OUTSIDE


@pytest.mark.parametrize("append", [False, True], ids=["truncate", "append"])
def test_a_hard_link_is_neither_truncated_nor_appended_to(tmp_path: Path, append: bool) -> None:
    outside = outside_file(tmp_path)
    os.link(outside, tmp_path / "eval.csv")
    with pytest.raises(regular_files.NotRegularFile, match="hard link"):
        formats.open_for_writing(tmp_path / "eval.csv", append=append)
    assert outside.read_text() == OUTSIDE


def test_a_hard_link_is_not_read_or_hashed(tmp_path: Path) -> None:
    os.link(outside_file(tmp_path), tmp_path / "run.json")
    with pytest.raises(reading.OverBound, match="hard link"):
        reading.read_text(tmp_path / "run.json")
    with pytest.raises(regular_files.NotRegularFile, match="hard link"):
        signatures.sha256(tmp_path / "run.json")


def test_links_in_names_links_of_every_kind_and_special_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "snapshots" / "step-1").mkdir(parents=True)
    (run / "config.yaml").write_text("seed: 0\n")  # a file of its own: not named
    os.link(outside_file(tmp_path), run / lock.LOCK_NAME)
    os.mkfifo(run / "run.json")
    (run / "snapshots" / "step-1" / "model.zip").symlink_to("/dev/zero")
    found = regular_files.links_in(run)
    assert [(path.relative_to(run).as_posix(), what) for path, what in found] == [
        (".lock", "a hard link (2 names for one file)"),
        ("run.json", "a FIFO (named pipe)"),
        ("snapshots/step-1/model.zip", "a symbolic link"),
    ]
    with pytest.raises(regular_files.NotRegularFile, match="FIFO"):
        regular_files.check_regular(run / "run.json")


def test_a_device_is_refused_without_being_opened(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "model.zip", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("making a device needs CAP_MKNOD")
    with pytest.raises(regular_files.NotRegularFile, match="a device"):
        regular_files.open_regular(tmp_path / "model.zip", os.O_RDONLY)


# What each reader does with a FIFO, run in a child: it must answer at once, never wait for a writer.
FIFO_READERS = {
    "read_text": "reading.read_text(path)",
    "read_json": "print(formats.read_json(path))",
    "sha256": "signatures.sha256(path)",
    "open for writing": "formats.open_for_writing(path)",
    "lock": "lock.acquire(path.parent)",
}


@pytest.mark.parametrize("reader", FIFO_READERS)
def test_a_fifo_is_refused_at_once_never_waited_on(tmp_path: Path, reader: str) -> None:
    path = tmp_path / (lock.LOCK_NAME if reader == "lock" else "run.json")
    os.mkfifo(path)
    code = (
        "import sys; from pathlib import Path\n"
        "from rlrun.record import formats, lock, reading, signatures\n"
        f"path = Path(sys.argv[1])\ntry:\n    {FIFO_READERS[reader]}\n"
        "except Exception as error:\n    print(type(error).__name__, error)\n"
    )
    done = forked_commands.run(["-c", code, str(path)], timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    assert "FIFO" in done.stdout or done.stdout.strip() == "None", done.stdout
