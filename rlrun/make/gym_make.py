"""What :func:`rlrun.make.vec_envs._gym_make` needs beyond ``gym.make``: the ids of installed families found without
their module prefix, and a failure while an env is made explained where it started.

MiniGrid, Gymnasium-Robotics and ALE register their ids when imported. Importing all of them costs about 0.4 s
(and Gymnasium-Robotics prints a notice), so :func:`register_installed_families` runs only once an id was not
found, together with the installed packages of :data:`THIRD_PARTY` (other projects' envs); it runs in every
process that makes envs, subprocess env workers included, since they make their copies through the same function.
An id still not found is matched against :data:`ID_MODULES` and :data:`THIRD_PARTY_IDS` to name the module (and
the extra) that would register it, and against the registered ids to name the closest. ``env.packages`` names
modules to import before any env is made (:func:`import_packages`).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import io
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

from rlrun.config.errors import UserError, in_standard_library, innermost_outside
from rlrun.make import families

# The start of an id (or its namespace) -> the module whose import registers it, for ids not found.
ID_MODULES = {
    "ALE/": "ale_py",
    "MiniGrid-": "minigrid",
    "BabyAI-": "minigrid",
    "Fetch": "gymnasium_robotics",
    "HandReach": "gymnasium_robotics",
    "HandManipulate": "gymnasium_robotics",
    "AdroitHand": "gymnasium_robotics",
    "AntMaze": "gymnasium_robotics",
    "PointMaze": "gymnasium_robotics",
    "FrankaKitchen": "gymnasium_robotics",
}


# Env packages of other projects that register their ids when imported, tried (when installed) once an id was not
# found, after the families' modules: one documented list (docs/envs.md, "Any env"), extended as users ask.
THIRD_PARTY = (
    "highway_env",
    "panda_gym",
    "miniworld",
    "mo_gymnasium",
    "safety_gymnasium",
    "metaworld",
    "gym_pybullet_drones",
    "flappy_bird_gymnasium",
    "shimmy",
)
# The start of an id of a third-party package -> that package, to name it when the id is not found.
THIRD_PARTY_IDS = {
    **{start: "highway_env" for start in ("highway", "merge-", "roundabout-", "parking", "intersection-")},
    **{start: "highway_env" for start in ("racetrack-", "u-turn-", "exit-", "two-way-", "lane-keeping-")},
    "Panda": "panda_gym",
    "MiniWorld-": "miniworld",
    "mo-": "mo_gymnasium",
    "Safety": "safety_gymnasium",
    "Meta-World/": "metaworld",
    "FlappyBird-": "flappy_bird_gymnasium",
}


def import_packages(packages: Sequence[str]) -> None:
    """Import each module of ``env.packages`` (RL Zoo's ``--gym-packages``), so the ids it registers can be made;
    a module that cannot be imported is a :class:`UserError` naming it."""
    for package in packages:
        try:
            importlib.import_module(package)
        except Exception as error:
            raise UserError(
                f"env.packages: {package!r} cannot be imported ({type(error).__name__}: {error})",
                f"install the package that provides {package}, or fix its name in env.packages=[...]",
            ) from None


# Where SB3 and Gymnasium take in what the envs return (SB3's vec env buffers and Monitor, Gymnasium's env checkers):
# a failure raised there is the env's data, not the algorithm's settings nor a library that fails.
ENV_DATA_FILES = ("stable_baselines3/common/vec_env/", "stable_baselines3/common/monitor.py", "gymnasium/utils/")
# Where a failure is the algorithm's rather than the env's.
ALGORITHM_PACKAGES = ("stable_baselines3", "sb3_contrib", "torch")


def register_installed_families() -> list[str]:
    """Import the registering module of every installed family, then every installed package of
    :data:`THIRD_PARTY`, not imported yet; returns those imported.

    Their notices (warnings, Gymnasium-Robotics' message on stderr) are silenced: the user asked for one env.
    """
    imported = []
    modules = [family.registers for family in families.FAMILIES.values()] + list(THIRD_PARTY)
    for module in modules:
        if module is None or module in sys.modules or families.missing_modules((module,)):
            continue
        if import_failure(module) is None:  # a broken install: its ids stay unknown, import_failures() says why
            imported.append(module)
    return imported


@functools.cache
def import_failure(module: str) -> str | None:
    """Import an installed env package quietly (its notices, warnings, Gymnasium-Robotics' message on stderr): why
    it fails (``ModuleNotFoundError: No module named ...``, as a package built for another Gymnasium raises), or
    None when it imports. Asked once per process."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            importlib.import_module(module)
        except Exception as error:
            return f"{type(error).__name__}: {' '.join(str(error).split())}"
    return None


def import_failures() -> dict[str, str]:
    """The installed env packages (the families' registering modules and :data:`THIRD_PARTY`) that fail to import,
    each with its error (:func:`import_failure`: those not tried yet in this process are tried now)."""
    modules = [family.registers for family in families.FAMILIES.values()] + list(THIRD_PARTY)
    installed = [m for m in modules if m and m not in sys.modules and not families.missing_modules((m,))]
    return {module: error for module in installed if (error := import_failure(module)) is not None}


def registering_module(env_id: str) -> str | None:
    """The module whose import would register ``env_id`` (by the start of the id), if one is known."""
    name = env_id.partition(":")[2] or env_id
    starts = {**ID_MODULES, **THIRD_PARTY_IDS}
    return next((module for start, module in starts.items() if name.startswith(start)), None)


def closest_ids(env_id: str, n: int = 3) -> list[str]:
    """The registered ids nearest ``env_id`` in spelling (module prefix dropped), nearest first."""
    name = env_id.partition(":")[2] or env_id
    return difflib.get_close_matches(name, list(gym.registry), n=n, cutoff=0.6)


def unknown_id_fix(env_id: str) -> str:
    """How to find an id that no installed package registers: its module prefix or extra, the closest registered
    ids, or the packages that could register it."""
    module = registering_module(env_id)
    family = next((f for f in families.FAMILIES.values() if module and f.registers == module), None)
    if module is not None and not families.missing_modules((module,)) and (failure := import_failure(module)):
        return (
            f"{module}, which registers ids like it, is installed but fails to import ({failure}): install a version "
            "that works with the Gymnasium installed here (pip show gymnasium), or reinstall it"
        )
    if module is None or family is None:
        close = closest_ids(env_id)
        nearest = f"did you mean {', '.join(close)}? " if close else ""
        could = f"{module} registers ids like it: " if module else ""
        could += "" if module is None or families.missing_modules((module,)) else "it is installed, "
        return (
            f"{nearest}{could}name the module that registers it in env.packages=[mypkg] (or env.id=mypkg:Id); "
            "list the registered ids with `rlrun-envs --all PATTERN`"
        )
    if families.missing_modules((module,)):
        return f"{module} registers it: install it with {families.install_command(family.extra)}"
    name = env_id.partition(":")[2] or env_id
    return f"{module} is installed but registers no such id: check the name and version ({module}:{name})"


def installed_package(path: str) -> str | None:
    """The top-level package an installed file belongs to (``.../site-packages/<package>/...``), else None."""
    parts = Path(path).parts
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):
            return parts[i + 1].removesuffix(".py")
    return None


def _in_env_data(error: BaseException) -> bool:
    """Whether ``error`` was raised where SB3 or Gymnasium take in what the env returned (:data:`ENV_DATA_FILES`)."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and any(part in Path(frames[-1].filename).as_posix() for part in ENV_DATA_FILES)


def failure_fix(error: BaseException, env_id: str) -> tuple[str, str]:
    """Where a failure inside an env (its constructor, ``reset`` or ``step``) or the algorithm started, and a fix
    that fits it.

    Returns ``(" (raised at file:line)", fix)``: in the user's own code, fix it there; in SB3 or torch, the
    algorithm's settings; in another installed library (an assertion of Gymnasium-Robotics under a MuJoCo it does
    not support), the versions its family's extra pins.
    """
    where = innermost_outside(error.__traceback__)
    if where is None:
        return "", "run again with HYDRA_FULL_ERROR=1 for the full traceback"
    if in_standard_library(where.rpartition(":")[0]):
        return f" (raised at {where})", "run again with HYDRA_FULL_ERROR=1 for the full traceback"
    package = installed_package(where.rpartition(":")[0])
    at = f" (raised at {where})"
    if package is None:
        return at, f"fix the env's code at {where} (HYDRA_FULL_ERROR=1 shows the full traceback)"
    if package in (*ALGORITHM_PACKAGES, "gymnasium") and _in_env_data(error):
        return at, (
            f"the env ({env_id}) or one of its wrappers returned an observation, reward or flag that is not what "
            f"{'Gymnasium' if package == 'gymnasium' else 'SB3'} takes (a reward must be one number, observations "
            f"must fit the observation space): fix what its reset and step return (rlrun-check env.id={env_id} "
            "checks them); HYDRA_FULL_ERROR=1 shows the full traceback"
        )
    if package in ALGORITHM_PACKAGES:
        return at, (
            f"the algorithm failed inside {package}: check the algo.* values against its documentation, and the "
            "observations and actions the env gives it; HYDRA_FULL_ERROR=1 shows the full traceback"
        )
    module = registering_module(env_id)  # the env's own family first: Fetch failing inside mujoco is robotics'
    family = next((f for f in families.FAMILIES.values() if module and f.registers == module), None)
    family = family or next((f for f in families.FAMILIES.values() if package in f.modules), None)
    pins = f" ({families.install_command(family.extra)})" if family else ""
    return at, (
        f"a library the env needs ({package}) fails: check the versions the extra pins{pins}; "
        "HYDRA_FULL_ERROR=1 shows the full traceback"
    )
