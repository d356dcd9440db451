"""The envs ship as ``rlrun.envs`` and import nothing of the runner: usable with plain Gymnasium."""

from __future__ import annotations

import ast
from pathlib import Path

ENVS = Path(__file__).resolve().parents[2] / "envs"


def test_envs_import_nothing_of_the_runner() -> None:
    """Inside envs/ imports are relative (``from . import``) or of other packages, never ``rlrun.<runner>``."""
    found = []
    for path in sorted(ENVS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found += [f"{path.relative_to(ENVS)}: {name}" for name in names if name.split(".")[0] in ("rlrun", "envs")]
    assert found == []
