"""Rendering shared by the rlrun envs: numpy drawing, text maps and the pygame window.

Frames are drawn with numpy only, so ``rgb_array`` (videos, notebooks) never needs pygame. ``human`` shows
the same frames in a pygame window; pygame is imported only when that window first opens, and its objects are
never pickled, so an env stays picklable in every render mode.
"""

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import logger
from gymnasium.error import DependencyNotInstalled

Color = tuple[int, int, int]
Frame = npt.NDArray[np.uint8]

WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)
RED: Color = (220, 40, 40)
GREEN: Color = (60, 180, 75)
BLUE: Color = (40, 80, 220)


def check_render_mode(render_mode: str | None, render_modes: Sequence[str]) -> str | None:
    """Return ``render_mode`` after checking it is None or one of ``render_modes`` (the env's metadata)."""
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be None or one of {list(render_modes)}, got {render_mode!r}")
    return render_mode


def new_frame(height: int, width: int, color: Color = WHITE) -> Frame:
    """Return an ``height x width x 3`` uint8 image filled with ``color``."""
    frame = np.empty((height, width, 3), dtype=np.uint8)
    frame[:] = color
    return frame


def fill_rect(frame: Frame, top: int, left: int, bottom: int, right: int, color: Color) -> None:
    """Paint the pixels of rows ``[top, bottom)`` and columns ``[left, right)``."""
    frame[max(top, 0) : max(bottom, 0), max(left, 0) : max(right, 0)] = color


def fill_disc(frame: Frame, row: float, col: float, radius: float, color: Color) -> None:
    """Paint the pixels whose centres lie within ``radius`` pixels of ``(row, col)``."""
    rows, cols = np.ogrid[: frame.shape[0], : frame.shape[1]]
    mask = (rows + 0.5 - row) ** 2 + (cols + 0.5 - col) ** 2 <= radius**2
    frame[mask] = color


def draw_grid(frame: Frame, cells: int, cell_px: int, color: Color = BLACK, width: int = 2) -> None:
    """Draw the lines of a ``cells x cells`` grid whose cells are ``cell_px`` pixels wide."""
    for i in range(cells + 1):
        start = min(i * cell_px, frame.shape[0] - width)
        frame[start : start + width, :] = color
        frame[:, start : start + width] = color


def plane_frame(
    low: float,
    high: float,
    agent: Sequence[float],
    goal: Sequence[float],
    goal_radius: float,
    size_px: int = 256,
) -> Frame:
    """Draw the square ``[low, high]^2`` with a green goal disc and a blue agent (y points up)."""
    scale = size_px / (high - low)
    frame = new_frame(size_px, size_px)
    fill_disc(frame, (high - goal[1]) * scale, (goal[0] - low) * scale, max(goal_radius * scale, 2.0), GREEN)
    fill_disc(frame, (high - agent[1]) * scale, (agent[0] - low) * scale, max(size_px / 50, 3.0), BLUE)
    fill_rect(frame, 0, 0, 2, size_px, BLACK)
    fill_rect(frame, size_px - 2, 0, size_px, size_px, BLACK)
    fill_rect(frame, 0, 0, size_px, 2, BLACK)
    fill_rect(frame, 0, size_px - 2, size_px, size_px, BLACK)
    return frame


def plane_text(
    low: float,
    high: float,
    agent: Sequence[float],
    goal: Sequence[float],
    goal_radius: float,
    cells: int = 21,
) -> str:
    """Draw the square ``[low, high]^2`` as text: ``A`` agent, ``G`` goal centre, ``*`` goal area."""
    width = (high - low) / cells
    centres = low + width * (np.arange(cells) + 0.5)

    def cell(value: float) -> int:
        return min(max(int((value - low) / width), 0), cells - 1)

    grid = [["." for _ in range(cells)] for _ in range(cells)]
    for row, y in enumerate(centres[::-1]):
        for col, x in enumerate(centres):
            if (x - goal[0]) ** 2 + (y - goal[1]) ** 2 <= goal_radius**2:
                grid[row][col] = "*"
    grid[cells - 1 - cell(goal[1])][cell(goal[0])] = "G"
    grid[cells - 1 - cell(agent[1])][cell(agent[0])] = "A"
    distance = float(np.hypot(agent[0] - goal[0], agent[1] - goal[1]))
    header = f"agent ({agent[0]:.3f}, {agent[1]:.3f})  goal ({goal[0]:.3f}, {goal[1]:.3f})"
    header += f"  distance {distance:.3f}"
    return "\n".join([header, *("".join(row) for row in grid)]) + "\n"


def _import_pygame() -> Any:
    """Import pygame, or explain which extra installs it."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
    except ImportError as e:
        raise DependencyNotInstalled(
            'pygame is not installed: run `pip install "rlrun[human]"` to use render_mode="human"'
        ) from e
    return pygame


class HumanWindow:
    """A pygame window that shows numpy frames at a fixed rate (the ``human`` render mode).

    The window opens on the first frame. Pickling drops the pygame objects (they cannot be pickled); the copy
    opens its own window when it next shows a frame.
    """

    def __init__(self, title: str, fps: int) -> None:
        """Remember the caption and frame rate; nothing is opened yet."""
        self.title = title
        self.fps = fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: Frame) -> None:
        """Show ``frame`` (HxWx3 uint8), then wait so that frames appear at ``fps``."""
        pygame = _import_pygame()
        if self._screen is None:
            pygame.display.init()  # the display only: pygame.init() would also open audio devices
            self._screen = pygame.display.set_mode((frame.shape[1], frame.shape[0]))
            pygame.display.set_caption(self.title)
            self._clock = pygame.time.Clock()
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.event.pump()
        pygame.display.update()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Close the window if it is open; safe to call more than once."""
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            pygame.quit()
            self._screen = None
            self._clock = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the settings only, never the pygame objects."""
        return {"title": self.title, "fps": self.fps, "_screen": None, "_clock": None}


def render(
    render_mode: str | None,
    draw_rgb: Callable[[], Frame],
    draw_text: Callable[[], str],
    window: HumanWindow,
) -> Frame | str | None:
    """Do ``Env.render`` for ``render_mode``: return a frame or text, or show the frame in ``window``."""
    if render_mode == "rgb_array":
        return draw_rgb()
    if render_mode == "ansi":
        return draw_text()
    if render_mode == "human":
        window.show(draw_rgb())
        return None
    logger.warn(
        "You are calling render without a render mode; pass render_mode to gymnasium.make, "
        'e.g. gymnasium.make("rlrun/GridWorld-v0", render_mode="rgb_array")'
    )
    return None
