"""The env families rlrun installs with one pip extra each, and what each needs at run time.

One list, used by the env builder (a config whose extra is missing stops with the ``pip install`` command before
any env is made), by ``rlrun-envs`` (which configs can run here; the ids that installed families register) and by
the launcher check of the command line (``hydra/launcher=ray`` or ``slurm`` without its extra). Finding a module
(:func:`importlib.util.find_spec`) imports nothing, so the checks cost microseconds.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import io
import json
import sys
import urllib.parse
from dataclasses import dataclass

from rlrun.config.errors import UserError


@dataclass(frozen=True)
class Family:
    """A pip extra of rlrun: the modules it installs that rlrun needs, and the one whose import registers ids."""

    extra: str
    modules: tuple[str, ...]  # all must be importable for the family's envs to run
    registers: str | None  # imported to register the family's ids with Gymnasium (None: Gymnasium has them)
    about: str  # what the family is, for listings


FAMILIES: dict[str, Family] = {
    family.extra: family
    for family in (
        Family("mujoco", ("mujoco",), None, "Gymnasium's MuJoCo locomotion and control tasks"),
        Family("robotics", ("gymnasium_robotics", "mujoco"), "gymnasium_robotics", "Gymnasium-Robotics (Fetch, ...)"),
        Family("minigrid", ("minigrid", "pygame"), "minigrid", "MiniGrid grid worlds"),
        Family("atari", ("ale_py", "cv2"), "ale_py", "Atari 2600 games (ALE) with SB3's Atari preprocessing"),
        Family("box2d", ("Box2D", "pygame"), None, "Gymnasium's Box2D tasks (LunarLander, BipedalWalker)"),
    )
}
# Extras of rlrun that are not env families: the modules they install, by the name of the extra.
LAUNCHER_EXTRAS: dict[str, tuple[str, ...]] = {
    "ray": ("ray",),
    "slurm": ("submitit", "hydra_plugins.hydra_submitit_launcher"),
}


@functools.cache
def _installed_from() -> tuple[str, bool] | None:
    """The folder rlrun was installed from and whether editably (pip's record, PEP 610 ``direct_url.json``);
    None when it came from a package index (or is not installed at all)."""
    # every "rlrun" pip knows of: a checkout's own rlrun.egg-info, first on the path when run from there, has none
    texts = [dist.read_text("direct_url.json") for dist in importlib.metadata.distributions(name="rlrun")]
    record = json.loads(next((text for text in texts if text), "{}"))
    url = record.get("url", "")
    if not url.startswith("file://"):
        return None
    return urllib.parse.unquote(url.removeprefix("file://")), bool(record.get("dir_info", {}).get("editable"))


def install_command(extra: str) -> str:
    """The command that installs an extra of rlrun the way this rlrun was installed, quoted for any shell: from a
    clone ``pip install -e "/path/to/rlrun[mujoco]"``, from a package index ``pip install "rlrun[mujoco]"``."""
    source = _installed_from()
    if source is None:
        return f'pip install "rlrun[{extra}]"'
    folder, editable = source
    return f'pip install {"-e " if editable else ""}"{folder}[{extra}]"'


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a module without a spec
        return False


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here."""
    return [module for module in modules if not _found(module)]


def installed(extra: str | None) -> bool:
    """Whether an extra's modules are all importable (True for ``None``: no extra needed)."""
    if extra is None:
        return True
    modules = FAMILIES[extra].modules if extra in FAMILIES else LAUNCHER_EXTRAS.get(extra, ())
    return not missing_modules(modules)


def require(extra: str | None, what: str) -> None:
    """Raise a :class:`UserError` naming ``pip install "rlrun[<extra>]"`` when ``extra``'s modules are missing.

    ``what`` names the config that needs it (``env=halfcheetah``, ``hydra/launcher=ray``).
    """
    if extra is None:
        return
    modules = FAMILIES[extra].modules if extra in FAMILIES else LAUNCHER_EXTRAS.get(extra, ())
    missing = missing_modules(modules)
    if missing:
        names = ", ".join(missing)
        raise UserError(
            f"{what} needs rlrun's {extra!r} extra, which is not installed here (missing: {names})",
            f"install it with: {install_command(extra)}",
        )


def register(extra: str | None) -> None:
    """Import the module that registers the family's ids (MiniGrid, Gymnasium-Robotics and ALE register on import),
    so its ids resolve without a ``module:`` prefix (``env=atari env.id=ALE/Pong-v5``)."""
    family = FAMILIES.get(extra or "")
    if family is not None and family.registers is not None and family.registers not in sys.modules:
        # gymnasium_robotics 1.4.2 prints a notice about its Adroit envs on import: not about what rlrun runs
        with contextlib.redirect_stderr(io.StringIO()):
            importlib.import_module(family.registers)


def family_of(entry_point: str) -> str | None:
    """The family (extra) whose package an env's entry point (``module:Class``) belongs to, or None."""
    module = entry_point.split(":", 1)[0]
    for family in FAMILIES.values():
        packages = [family.registers] if family.registers else []
        packages.append(f"gymnasium.envs.{family.extra}")  # Gymnasium's own mujoco and box2d envs
        if any(module == package or module.startswith(package + ".") for package in packages):
            return family.extra
    return None
