"""Shared setup of the env tests: a headless SDL driver, so that ``render_mode="human"`` runs anywhere."""

import os

# Set before pygame is first imported (lazily, by the first human render); CI machines have no display.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
