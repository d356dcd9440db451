"""What the Zoo's tests share: the Zoo's own hyperparameter files."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml


def zoo_hyperparams(algo: str) -> dict:
    """rl_zoo3's hyperparams/<algo>.yml, read without importing rl_zoo3 (it needs huggingface_hub)."""
    spec = importlib.util.find_spec("rl_zoo3")
    assert spec is not None and spec.submodule_search_locations, "rl_zoo3 is not installed (the test extra has it)"
    folder = Path(next(iter(spec.submodule_search_locations)))
    return yaml.safe_load((folder / "hyperparams" / f"{algo}.yml").read_text())
