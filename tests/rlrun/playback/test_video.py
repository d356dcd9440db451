"""Videos that behave (rlrun/playback/video.py): an MP4 streamed with flat memory, a GIF capped with a message,
a stop signal leaving no file, progress lines."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest

import rlrun
from rlrun.config.errors import UserError
from rlrun.playback.video import run_episodes, video_file
from tests import forked_commands

# Records FRAMES frames of 240x320 to an MP4 through rlrun's sink; prints the process's peak memory (MiB).
PEAK_RSS = """
import resource, sys
from pathlib import Path
import numpy as np
from rlrun.playback.video import video_file

frames = int(sys.argv[2])
with video_file(Path(sys.argv[1]), fps=30) as sink:
    for k in range(frames):
        frame = np.full((240, 320, 3), k % 256, dtype=np.uint8)
        frame[:, k % 320] = 255
        sink.add(frame)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def peak_mib(path: Path, frames: int) -> int:
    result = forked_commands.run(["-c", PEAK_RSS, str(path), str(frames)], timeout=300)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])


def test_an_mp4_is_streamed_its_memory_flat_whatever_the_length(tmp_path: Path) -> None:
    short, long = peak_mib(tmp_path / "short.mp4", 100), peak_mib(tmp_path / "long.mp4", 2000)
    # 1,900 more frames held in memory would be 1900 * 230 KB = 437 MiB more
    assert long - short < 60, (short, long)
    assert imageio.get_reader(tmp_path / "long.mp4").count_frames() == 2000
    assert {p.name for p in tmp_path.iterdir()} == {"short.mp4", "long.mp4"}  # no partial file left


def test_a_gif_is_capped_with_a_message(tmp_path: Path) -> None:
    said: list[str] = []
    frame = np.zeros((32, 48, 3), dtype=np.uint8)
    with video_file(tmp_path / "a.gif", fps=10, say=said.append, gif_max_bytes=10 * frame.nbytes) as sink:
        for k in range(50):
            sink.add(frame + k)
    assert len(imageio.mimread(tmp_path / "a.gif")) == 10
    # the start line ("recording to ..."), then the cap's message, once
    assert len(said) == 2 and said[0] == f"rlrun-eval: recording to {tmp_path / 'a.gif'} ..."
    assert "the GIF stops at 10 frames" in said[1] and ".mp4" in said[1]


def test_an_error_while_recording_leaves_no_file(tmp_path: Path) -> None:
    for name in ("a.gif", "a.mp4"):
        with pytest.raises(KeyboardInterrupt), video_file(tmp_path / name, fps=10) as sink:
            sink.add(np.zeros((32, 48, 3), dtype=np.uint8))
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_other_video_suffixes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="must end in .gif or .mp4"), video_file(tmp_path / "a.avi", fps=10):
        pass


def test_a_long_evaluation_prints_its_progress(finished_run: Path) -> None:
    said: list[str] = []
    model, env = rlrun.load_run(finished_run, n_envs=1)
    run_episodes(model, env, 3, None, None, say=said.append, progress_s=0.0)
    env.close()
    assert said and said[-1].startswith("rlrun-eval: 3/3 episodes done")


@pytest.mark.parametrize("name", ["long.mp4", "long.gif"])
def test_sigint_stops_a_recording_at_once_leaving_no_file(finished_run: Path, tmp_path: Path, name: str) -> None:
    video = tmp_path / name
    command = ["-m", "rlrun.cli.eval", str(finished_run), "--episodes", "100000", "--video", str(video)]
    child = forked_commands.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        started = next(line for line in child.stdout if "recording to" in line)  # the episodes have started
        assert str(video) in started
        time.sleep(2)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "stopped by SIGINT; no video written" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
