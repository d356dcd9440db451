"""Rendering on a machine without a display: MuJoCo's offscreen renderer through EGL, and whether a window can open.

MuJoCo renders ``rgb_array`` frames through GLFW by default, which needs a display; on a server (no ``DISPLAY``,
no ``WAYLAND_DISPLAY``) :func:`prefer_egl` sets ``MUJOCO_GL=egl`` (Mesa's or the GPU driver's EGL) unless the user
chose a backend and EGL's library is there. ``import mujoco`` reads the variable (and with ``egl`` loads
PyOpenGL's EGL, which fails without ``libEGL``), so setting it at ``import rlrun`` (the package's ``__init__``
calls it) comes before any MuJoCo env of rlrun's is made; subprocess env workers inherit it. A window
(``render_mode="human"``) cannot open without a display whatever the backend: GLFW aborts the process
(``glfwGetVideoMode: Assertion 'monitor != NULL' failed``), which is why the checks ask :func:`display_available`
before they render ``human``.

Imports nothing of rlrun's, and only the standard library: ``import rlrun`` stays light (on a server without a
display, loading ``libEGL`` adds about 5 ms).
"""

from __future__ import annotations

import os
import sys

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY")


def display_available() -> bool:
    """Whether a window can open here: on Linux, a display server is named; macOS and Windows have their own."""
    if not sys.platform.startswith("linux"):
        return True
    return any(os.environ.get(name) for name in DISPLAY_VARIABLES)


def prefer_egl() -> None:
    """Set ``MUJOCO_GL=egl`` on a Linux machine without a display when ``MUJOCO_GL`` is unset (or empty) and
    ``libEGL`` loads. Under EGL (set here or by the user), PyOpenGL's note that its optional accelerator is missing
    is not logged."""
    if not os.environ.get("MUJOCO_GL") and not display_available():
        import ctypes  # only here: a machine with a display or a chosen backend imports nothing more

        try:
            ctypes.CDLL("libEGL.so.1")
            os.environ["MUJOCO_GL"] = "egl"
        except OSError:  # no EGL here: MuJoCo keeps its default, and rgb_array rendering may fail (information)
            pass
    if os.environ.get("MUJOCO_GL") == "egl":
        import logging

        logging.getLogger("OpenGL.acceleratesupport").setLevel(logging.WARNING)
