"""The arguments an algorithm's constructor takes (:func:`constructor_arguments`), for the command line's answers.

A mistake on the command line is answered before torch, SB3 or JAX are imported (importing them costs seconds),
so the constructor of an ``algo`` config's ``_target_`` is read from its source with :mod:`ast`, following the
package's re-exports (``stable_baselines3.PPO`` is ``stable_baselines3/ppo/ppo.py``'s ``PPO``). A class whose
source cannot be followed so, or whose constructor passes ``**kwargs`` on, is imported and inspected instead.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path

# what rlrun passes to every algorithm itself (DESIGN.md: algo files never set them)
RUNTIME_ARGS = ("env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model")


def constructor_arguments(target: str) -> list[str]:
    """The names ``target``'s constructor takes, without ``self``, ``*args``/``**kwargs`` and what rlrun passes."""
    module, _, name = target.rpartition(".")
    params = _read(module, name, depth=0)
    if params is None:
        from hydra.utils import get_class

        params = list(inspect.signature(get_class(target)).parameters)
    return [p for p in params if p not in ("self", "args", "kwargs", *RUNTIME_ARGS)]


def _source(module: str) -> Path | None:
    """The file of ``module`` (``a.b.c``), found without importing any package on the way."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin is None:
        return None
    base = Path(spec.origin).parent if rest else Path(spec.origin)
    for path in (base.joinpath(*rest).with_suffix(".py"), base.joinpath(*rest, "__init__.py")):
        if rest and path.is_file():
            return path
    return base if not rest and base.is_file() else None


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, its relative dots resolved."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _read(module: str, name: str, depth: int) -> list[str] | None:
    """The constructor arguments of class ``name`` in ``module`` (following ``from x import name``), or None."""
    path = _source(module)
    if path is None or depth > 4:
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name and a.asname is None for a in node.names):
            return _read(_absolute(module, path, node), name, depth + 1)
        if isinstance(node, ast.ClassDef) and node.name == name:
            init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is None or init.args.kwarg is not None:
                return None  # inherited, or passed on: only the class itself can say
            return [a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)]
    return None
