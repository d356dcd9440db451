"""``rlrun-track sync`` says how many TensorBoard points it could not read (issue 48): TensorBoard's reader stops at
a damaged record without a word, and a sync sent 42 of 53 points as if they were all."""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import pytest
from torch.utils.tensorboard import SummaryWriter

from rlrun.track import event_files, sync

POINTS = 53


def event_file(folder: Path) -> Path:
    writer = SummaryWriter(str(folder))
    for step in range(POINTS):
        writer.add_scalar("eval/mean_reward", float(step), step)
    writer.close()
    (path,) = folder.glob("*tfevents*")
    return path


def damage_record(path: Path, index: int) -> None:
    """Flip a byte in the data of record ``index`` (its length header stays whole, its checksum no longer holds)."""
    data = bytearray(path.read_bytes())
    offset = 0
    for _ in range(index):
        offset += event_files.HEADER + struct.unpack_from("<Q", data, offset)[0] + event_files.FOOTER
    data[offset + event_files.HEADER + 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_the_points_after_a_damaged_record_are_counted_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = event_file(tmp_path / "tb")
    assert event_files.unread_points(tmp_path / "tb") == {}
    damage_record(path, 43)  # record 0 is the file's version: the 43rd point is damaged
    with caplog.at_level(logging.WARNING, logger="rlrun"):
        scalars = sync.tb_scalars(tmp_path / "tb")
    assert len(scalars) == 42  # what TensorBoard reads
    assert f"{path}: 11 point(s) after a damaged record cannot be read and are not synced" in caplog.text


def test_a_cut_event_file_counts_its_cut_record(tmp_path: Path) -> None:
    path = event_file(tmp_path / "tb")
    path.write_bytes(path.read_bytes()[:-10])  # the last record cut short
    assert event_files.unread_points(tmp_path / "tb") == {path: 1}
