"""MP4 videos need ffmpeg (imageio-ffmpeg), which rlrun's use install does not bring: the extra that does, ``video``,
is named where videos are documented and in the fix of an MP4 asked for without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rlrun.config.errors import UserError
from rlrun.playback import video

ROOT = Path(__file__).resolve().parents[3]


def test_the_video_extra_brings_ffmpeg_and_the_docs_name_it() -> None:
    assert '\nvideo = ["imageio-ffmpeg' in (ROOT / "pyproject.toml").read_text()
    assert 'pip install "rlrun[video]"' in " ".join((ROOT / "docs" / "runs.md").read_text().split())


def test_an_mp4_without_ffmpeg_is_refused_with_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as if not installed
    with pytest.raises(UserError) as refused:
        video._Mp4(tmp_path / "episode.mp4", 30)
    assert refused.value.fix == 'pip install "rlrun[video]", or write a .gif'
    assert list(tmp_path.iterdir()) == []
