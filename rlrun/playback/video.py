"""``rlrun-eval``'s episodes: evaluated, printed as text, shown in a window or recorded to a video, with progress.

An MP4 is written as the frames come (imageio's ffmpeg writer streams them to ffmpeg), so its memory stays flat
whatever the length. A GIF cannot be streamed (imageio's Pillow writer holds every frame until it closes), so its
frames are held here and capped at :data:`GIF_MAX_BYTES`, with a message saying where it stopped. Either is
written under a hidden temporary name and renamed once complete: a stop signal (Ctrl-C, SIGTERM) ends the
recording within a step and leaves no file (:class:`Stopped`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.config.errors import UserError
from rlrun.playback.loading import eval_copies
from rlrun.run.evaluation import EvalResult, evaluate
from rlrun.run.signals import handling

GIF_MAX_BYTES = 256 * 2**20  # raw frames a GIF holds before it is written (CartPole's 600x400: about 370 frames)
PROGRESS_S = 10.0  # seconds between progress lines of a long evaluation or recording
_BLOCK = 16  # ffmpeg's macro block: frames are padded to a multiple of it (no resizing, no warning)


def _say(line: str) -> None:
    print(line, flush=True)  # at once, also into a pipe or a log


class Stopped(Exception):
    """A stop signal ended the evaluation; nothing was written."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.exit_status = 128 + signum


class _StopOnSignal:
    """A stop signal raises :class:`Stopped` at once; an error that follows it (ffmpeg, in the terminal's process
    group, got the Ctrl-C too) is reported as that stop."""

    def __init__(self) -> None:
        self.received: int | None = None

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        self.received = signum
        raise Stopped(signum)


class _Mp4:
    """Frames streamed to ffmpeg as they come."""

    def __init__(self, path: Path, fps: int) -> None:
        import imageio.v2 as imageio

        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise UserError("--video *.mp4 needs ffmpeg", 'pip install "rlrun[video]", or write a .gif') from None
        self.writer = imageio.get_writer(path, format="FFMPEG", fps=fps, macro_block_size=_BLOCK)
        self.frames = 0

    def add(self, frame: np.ndarray) -> None:
        height, width = frame.shape[:2]
        padding = ((0, -height % _BLOCK), (0, -width % _BLOCK)) + ((0, 0),) * (frame.ndim - 2)
        self.writer.append_data(np.pad(frame, padding))
        self.frames += 1

    def finish(self) -> None:
        self.writer.close()

    def abandon(self) -> None:
        with contextlib.suppress(Exception):  # ffmpeg may have got the terminal's Ctrl-C too
            self.writer.close()


class _Gif:
    """Frames held until the end, at most ``max_bytes`` of them (see the module's docstring)."""

    def __init__(self, path: Path, fps: int, max_bytes: int, say: Callable[[str], None]) -> None:
        self.path, self.fps, self.max_bytes, self.say = path, fps, max_bytes, say
        self.held: list[np.ndarray] = []
        self.bytes = 0
        self.capped = False

    @property
    def frames(self) -> int:
        return len(self.held)

    def add(self, frame: np.ndarray) -> None:
        if self.capped:
            return
        if self.held and self.bytes + frame.nbytes > self.max_bytes:
            self.capped = True
            seconds = len(self.held) / self.fps
            self.say(
                f"rlrun-eval: the GIF stops at {len(self.held)} frames ({seconds:.1f} s): a GIF holds every frame "
                "in memory until it is written; record to a .mp4 for whole episodes"
            )
            return
        self.held.append(np.array(frame))
        self.bytes += frame.nbytes

    def finish(self) -> None:
        import imageio.v2 as imageio

        imageio.mimwrite(self.path, list[Any](self.held), format="GIF", duration=1000 / self.fps, loop=0)

    def abandon(self) -> None:
        self.held.clear()


@contextlib.contextmanager
def video_file(
    path: Path,
    fps: int,
    say: Callable[[str], None] = _say,
    gif_max_bytes: int = GIF_MAX_BYTES,
) -> Iterator[_Mp4 | _Gif]:
    """A sink for ``rgb_array`` frames: ``path`` appears, complete, only when the block ends without an error."""
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise UserError(f"--video {path}: the file must end in .gif or .mp4", "e.g. --video episode.mp4")
    if not path.parent.is_dir():
        raise UserError(f"--video {path}: no folder {path.parent}", "create it, or give a path in an existing folder")
    partial = path.with_name(f".{path.stem}.partial{suffix}")
    sink: _Mp4 | _Gif = _Mp4(partial, fps) if suffix == ".mp4" else _Gif(partial, fps, gif_max_bytes, say)
    say(f"rlrun-eval: recording to {path} ...")
    try:
        yield sink
        sink.finish()
        os.replace(partial, path)
    except BaseException:
        sink.abandon()
        raise
    finally:
        partial.unlink(missing_ok=True)


class _Progress:
    """Counts the episodes that end (as the evaluation counts them) and prints a line every ``every_s`` seconds."""

    def __init__(self, episodes: int, every_s: float, say: Callable[[str], None]) -> None:
        self.episodes, self.every_s, self.say = episodes, every_s, say
        self.done = 0
        self.started = self.last = time.monotonic()

    def step(self, locals_: dict[str, Any], frames: int | None) -> None:
        info = locals_["info"]
        if locals_["done"] and ("episode" in info or not locals_["is_monitor_wrapped"]):
            self.done += 1
        if time.monotonic() - self.last >= self.every_s:
            self.last = time.monotonic()
            recorded = "" if frames is None else f", {frames:,} frames recorded"
            seconds = time.monotonic() - self.started
            self.say(f"rlrun-eval: {self.done}/{self.episodes} episodes done{recorded} ({seconds:.0f} s)")


def run_episodes(
    model: BaseAlgorithm,
    env: VecEnv,
    episodes: int,
    render: str | None,
    video: Path | None,
    success_key: str = "is_success",
    say: Callable[[str], None] = _say,
    progress_s: float = PROGRESS_S,
) -> EvalResult:
    """Evaluate ``episodes`` episodes: printing ANSI frames (``render="ansi"``), in a window (``"human"``: the
    env draws itself as it steps), or writing ``rgb_array`` frames to ``video``; a progress line every
    ``progress_s`` seconds. Frames come from the first copy (render and record on a one-copy env, ``load_run``'s
    default). A stop signal raises :class:`Stopped` within a step, with nothing written."""
    base = env.unwrapped.envs[0] if render == "ansi" or video else None  # type: ignore[attr-defined]
    stop = _StopOnSignal()
    try:
        with handling(stop):
            return _episodes(model, env, episodes, base, video, say, progress_s, success_key)
    except Exception as error:
        if stop.received is None or isinstance(error, Stopped):
            raise
        raise Stopped(stop.received) from error


def _episodes(
    model: BaseAlgorithm,
    env: VecEnv,
    episodes: int,
    base: Any,
    video: Path | None,
    say: Callable[[str], None],
    progress_s: float,
    success_key: str,
) -> EvalResult:
    fps = int(base.metadata.get("render_fps") or 30) if base is not None else 30
    with video_file(video, fps, say) if video else contextlib.nullcontext() as sink:
        progress = _Progress(episodes, progress_s, say)
        shown = {"episode": 1, "step": 0}  # the first copy's, whose frames are shown

        def on_step(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
            if base is not None and locals_["i"] == 0:
                frame = base.render()
                shown["step"] += 1
                if sink is not None:
                    sink.add(np.asarray(frame))
                else:  # text frames, each under the step that led to it
                    print(f"episode {shown['episode']}, step {shown['step']}:\n{frame}")
                if locals_["done"]:
                    shown["episode"], shown["step"] = shown["episode"] + 1, 0
            progress.step(locals_, None if sink is None else sink.frames)

        return evaluate(model, env, episodes, on_step=on_step, success_key=success_key)


def copies(n_envs: int | None, render_mode: str | None, episodes: int, run_dir: Path) -> int:
    """How many copies to step together: one to render or record (frames of one episode); at most the episodes."""
    if n_envs is not None and n_envs < 1:
        raise UserError(f"--n-envs {n_envs} must be at least 1", "e.g. --n-envs 8")
    if render_mode is not None:
        if n_envs not in (None, 1):
            raise UserError(f"--n-envs {n_envs} with --render/--video: frames come from one copy", "drop --n-envs")
        return 1
    return n_envs if n_envs is not None else min(eval_copies(run_dir), episodes)


def render_mode(render: str | None, video: Path | None) -> str | None:
    """The eval env's ``render_mode``: ``rgb_array`` to record, ``human`` (a window: only with a display)."""
    if video and render:
        raise UserError(f"--render {render} with --video: one at a time", "drop --render, or drop --video")
    if render == "human" and sys.platform.startswith("linux"):
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            raise UserError(
                "--render human opens a window, and this session has no display (DISPLAY is not set)",
                "record it instead: --video episode.mp4 (or --render ansi for envs that print text)",
            )
    return "rgb_array" if video else render
