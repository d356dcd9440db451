"""The env families' install commands: the form that works for the way rlrun was installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlrun.make import families

REPO = Path(__file__).resolve().parents[3]


class Dist:
    """A stand-in for an installed distribution: only its ``direct_url.json`` (pip's record, PEP 610)."""

    def __init__(self, record: dict | None) -> None:
        self.record = record

    def read_text(self, name: str) -> str | None:
        return None if self.record is None or name != "direct_url.json" else json.dumps(self.record)


@pytest.mark.parametrize(
    ("records", "command"),
    [
        ([{"url": "file:///home/me/rlrun", "dir_info": {"editable": True}}], 'pip install -e "/home/me/rlrun[mujoco]"'),
        ([None, {"url": "file:///src/my%20rlrun", "dir_info": {}}], 'pip install "/src/my rlrun[mujoco]"'),
        ([{"url": "https://example.org/rlrun-0.1.0.tar.gz", "archive_info": {}}], 'pip install "rlrun[mujoco]"'),
        ([None], 'pip install "rlrun[mujoco]"'),  # from a package index: pip writes no direct_url.json
    ],
    ids=["clone-editable", "folder", "archive", "index"],
)
def test_the_install_command_follows_how_rlrun_was_installed(
    monkeypatch: pytest.MonkeyPatch, records: list, command: str
) -> None:
    monkeypatch.setattr(families.importlib.metadata, "distributions", lambda name: [Dist(r) for r in records])
    families._installed_from.cache_clear()
    try:
        assert families.install_command("mujoco") == command
    finally:
        families._installed_from.cache_clear()


def test_this_checkout_is_named_as_it_was_installed() -> None:
    """The test environment installs this checkout (editable in CI): its fix lines name it, not the index."""
    families._installed_from.cache_clear()
    command = families.install_command("mujoco")
    assert command.endswith(f'"{REPO}[mujoco]"') and command.startswith("pip install ")
