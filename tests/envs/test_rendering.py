"""Rendering helpers (``envs/rendering.py``): numpy drawing, text maps, the pygame window."""

import pickle
import sys

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled
from rlrun.envs import rendering
from rlrun.envs.point import PointEnv


def test_check_render_mode() -> None:
    modes = ["human", "rgb_array", "ansi"]
    for mode in [None, *modes]:
        assert rendering.check_render_mode(mode, modes) == mode
    expected = r"render_mode must be None or one of \['human', 'rgb_array', 'ansi'\], got 'rgb_array_list'"
    with pytest.raises(ValueError, match=expected):
        rendering.check_render_mode("rgb_array_list", modes)


def test_shapes_are_drawn_where_asked() -> None:
    frame = rendering.new_frame(40, 60)
    assert frame.shape == (40, 60, 3) and frame.dtype == np.uint8 and (frame == 255).all()
    rendering.fill_rect(frame, 0, 0, 10, 20, rendering.RED)
    rendering.fill_disc(frame, 30.0, 40.0, 5.0, rendering.BLUE)
    assert frame[5, 10].tolist() == list(rendering.RED) and frame[5, 30].tolist() == [255, 255, 255]
    assert frame[30, 40].tolist() == list(rendering.BLUE) and frame[30, 47].tolist() == [255, 255, 255]


def test_plane_frame_puts_y_up() -> None:
    frame = rendering.plane_frame(0.0, 4.0, agent=(1.0, 3.0), goal=(3.0, 1.0), goal_radius=0.5, size_px=64)
    assert frame.shape == (64, 64, 3)
    assert frame[16, 16].tolist() == list(rendering.BLUE)  # agent top left
    assert frame[48, 48].tolist() == list(rendering.GREEN)  # goal bottom right


def test_plane_text_puts_y_up() -> None:
    text = rendering.plane_text(0.0, 3.0, agent=(0.5, 2.5), goal=(2.5, 0.5), goal_radius=0.1, cells=3)
    assert text.splitlines()[1:] == ["A..", "...", "..G"]
    assert text.splitlines()[0].startswith("agent (0.500, 2.500)  goal (2.500, 0.500)  distance 2.828")


def test_missing_pygame_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    env = PointEnv(render_mode="human")
    with pytest.raises(DependencyNotInstalled, match=r'pip install "rlrun\[human\]"'):
        env.reset(seed=0)


def test_window_is_not_pickled_and_reopens() -> None:
    window = rendering.HumanWindow("test", fps=1000)
    window.show(rendering.new_frame(32, 48))
    assert window._screen is not None
    copy = pickle.loads(pickle.dumps(window))
    assert (copy.title, copy.fps, copy._screen, copy._clock) == ("test", 1000, None, None)
    window.close()
    copy.show(rendering.new_frame(32, 48))
    assert copy._screen is not None
    copy.close()
    copy.close()
