"""run.json names the code that trained, apart from the working folder's git: rlrun's own checkout, or the commit pip
recorded when it installed rlrun from a git URL (PEP 610's direct_url.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlrun.record import provenance
from rlrun.record.run_record import RunRecord
from tests.rlrun.helpers import compose_config

SHA = "3" * 40


def fake_distribution(site: Path, direct_url: dict | None) -> None:
    """An installed distribution ``fake`` in ``site``, with ``direct_url`` as pip writes it."""
    info = site / "fake-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake\nVersion: 1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


@pytest.mark.parametrize(
    ("direct_url", "commit"),
    [
        ({"url": "https://example.org/rlrun.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}, SHA),
        ({"url": "file:///home/me/rlrun", "dir_info": {}}, None),  # a wheel built from a folder: no commit known
        (None, None),  # from a package index
    ],
    ids=["git-url", "folder", "index"],
)
def test_the_commit_pip_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct_url: dict | None, commit: str | None
) -> None:
    fake_distribution(tmp_path, direct_url)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert provenance.installed_commit("fake") == commit


def test_a_run_records_the_code_that_trained_apart_from_the_folders_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # started from a folder that is no checkout
    cfg = compose_config("env=gridworld", "algo=ppo")
    RunRecord.start(tmp_path / "run", cfg, {"env": "gridworld", "algo": "ppo"}, "MultiInputPolicy", "exact")
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["git"] is None
    assert record["rlrun_commit"] == provenance.source_commit() and len(record["rlrun_commit"]) == 40
