"""What TensorBoard's reader leaves unread of a run's event files.

TensorBoard reads an event file record by record and stops, without a word, at the first record it cannot read
(a bad checksum, or a cut record: for a file still being written, the end so far). In a run folder at rest such a
record is damage, and every point after it would be left out of ``rlrun-track sync`` unsaid. :func:`unread_points`
counts them: the records TensorBoard's own loader yields are read, the rest of the file is walked by its length
headers only (no checksum: the damage is what is counted).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from google.protobuf.message import DecodeError

HEADER = 12  # a record: length (uint64), its checksum (uint32), the data, the data's checksum (uint32)
FOOTER = 4


def unread_points(folder: Path) -> dict[Path, int]:
    """For each event file under ``folder`` that TensorBoard's reader stops reading before its end, how many
    scalar points it leaves unread (at least one: the damaged record's)."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

    unread: dict[Path, int] = {}
    for path in sorted(folder.glob("**/*tfevents*")):
        if path.is_symlink() or not path.is_file():
            continue
        read = sum(1 for _ in RawEventFileLoader(str(path)).Load())
        rest = list(_records(path.read_bytes()))[read:]
        if rest:
            unread[path] = max(sum(_points(record) for record in rest), 1)
    return unread


def _records(data: bytes) -> Iterator[bytes | None]:
    """The records of an event file framed by their length headers; None for the rest of a file whose length header
    points past its end."""
    offset = 0
    while offset + HEADER <= len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        end = offset + HEADER + length + FOOTER
        if end > len(data):
            yield None
            return
        yield data[offset + HEADER : end - FOOTER]
        offset = end


def _points(record: bytes | None) -> int:
    """The scalar points of one record (one, where it cannot be parsed)."""
    from tensorboard.compat.proto.event_pb2 import Event

    if record is None:
        return 1
    try:
        event = Event.FromString(record)
    except DecodeError:
        return 1
    return sum(1 for value in event.summary.value if value.HasField("simple_value") or _is_scalar(value))


def _is_scalar(value: object) -> bool:
    return getattr(getattr(getattr(value, "metadata", None), "plugin_data", None), "plugin_name", "") == "scalars"
