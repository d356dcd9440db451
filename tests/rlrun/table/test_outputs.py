"""The table files (rlrun/table/outputs.py): BENCHMARKS.md sections."""

from __future__ import annotations

from pathlib import Path

from rlrun.table.outputs import write_section


def test_write_section_rewrites_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section(path, "presets", "first")
    write_section(path, "speed", "other helper's")
    write_section(path, "presets", "second $1 \\1")  # no regex replacement in the body
    text = path.read_text()
    assert text.startswith("# Benchmarks\n")
    assert "<!-- rlrun:begin presets -->\nsecond $1 \\1\n<!-- rlrun:end presets -->" in text
    assert "<!-- rlrun:begin speed -->\nother helper's\n<!-- rlrun:end speed -->" in text and "first" not in text
