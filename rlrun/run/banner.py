"""The start banner: the lines a run logs first, saying what it trains and where its values come from.

``preset halfcheetah_sac: RL Zoo's values, not re-verified, 1M steps`` and the file the preset came from (or that
no preset applies), then the lines the caller adds: what a budget chosen on the command line scaled
(:mod:`rlrun.config.budget`), and a resumed run's resume mode. The preset's origin is read from the first comment
of its file, which every preset starts with (DESIGN.md, "Configs").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig

from rlrun.config.keys import override_key

# What a preset's first comment says about its origin, and the few words the banner gives for it (first match wins)
ORIGINS = (
    ("the Zoo's values, not re-verified", "RL Zoo's values, not re-verified"),
    ("Reaches:", "tuned here, verified on seeds 0-4 (pytest -m slow)"),
    ("tuned here", "tuned here"),
)


def steps(count: int) -> str:
    """A budget as the preset headers write it: ``1M``, ``2.5M``, ``20k``, ``1500``."""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if count >= size and count % (size // 10) == 0:
            return f"{count / size:g}{unit}"
    return str(count)


def preset_file(name: str, meta: Mapping[str, Any]) -> Path | None:
    """The file of preset ``name``: the one the command line's Hydra found (``meta["preset_file"]``), else
    rlrun's own ``conf/tuned/<name>.yaml``."""
    if meta.get("preset_file"):
        return Path(str(meta["preset_file"]))
    path = Path(str(files("rlrun.conf").joinpath("tuned", f"{name}.yaml")))
    return path if path.is_file() else None


def _header(path: Path) -> str:
    """The first comment block of a preset file, its lines joined (``# @package`` left out)."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        if not line.startswith("# @package"):
            lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def origin(path: Path) -> str:
    """Where the preset's values come from, in a few words, from its first comment."""
    header = _header(path)
    for marker, words in ORIGINS:
        if marker in header:
            return words
    return "origin in its header"


def _budget(path: Path, total: int, given: set[str]) -> str:
    """The run's budget, and the preset's when the command line chose another."""
    preset_total = (yaml.safe_load(path.read_text()) or {}).get("total_timesteps")
    if preset_total in (None, total) or "total_timesteps" not in given:
        return f"{steps(total)} steps"
    return f"{steps(total)} steps (total_timesteps from the command line; the preset's budget: {steps(preset_total)})"


def start_lines(cfg: DictConfig, meta: Mapping[str, Any], extra: Iterable[str] = ()) -> list[str]:
    """The banner: the preset, its origin and budget, and its file (or that none applies); then ``extra``, the
    lines a caller adds (budget scaling, a resumed run's mode)."""
    preset, algo = meta.get("preset"), meta.get("algo") or "?"
    given = {override_key(str(o)) for o in meta.get("overrides", [])}
    path = preset_file(str(preset), meta) if preset else None
    if path is None:
        lines = [f"no preset: algo={algo} at its config's values (SB3's defaults), {steps(cfg.total_timesteps)} steps"]
    else:
        budget = _budget(path, cfg.total_timesteps, given)
        lines = [f"preset {preset}: {origin(path)}, {budget}", f"  from {path}"]
    return [*lines, *extra]
