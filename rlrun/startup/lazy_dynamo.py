"""Keep ``torch._dynamo`` out of processes that never compile: about a second and 70 MB of every run.

torch's optimizers touch ``torch._dynamo`` only to tell its compiler what not to trace: ``Optimizer.__init__``,
``zero_grad`` and ``state_dict`` are wrapped by ``torch._disable_dynamo``, which imports it on their first call,
and every ``step`` calls ``torch._dynamo.graph_break()``. The import (sympy, torch.fx's symbolic shapes and
thousands of dynamo classes) took 1.0-1.1 s and 70 MB of peak memory here, after torch and SB3 (the first
import of a cold cache, 2.9 s), in every training process; SB3 never compiles. torch has no switch for this
(pytorch/pytorch#162595 removed the import from ``import torch`` only).

:func:`install` puts a stand-in module under the name ``torch._dynamo``. Until the real module is loaded
nothing can be compiling, so the stand-in's ``graph_break`` does nothing and a function given to its
``disable`` runs as it is. Anything else asked of it (``torch.compile``, any other attribute, an import of a
submodule) loads the real module first; from then on the stand-in forwards everything to it, and the
functions ``disable`` was given before go through the real ``disable``. Results never depend on it: the
tests train with and without the stand-in and compare the parameters.

Private API: torch's private module ``torch._dynamo`` (its name, ``graph_break()`` and ``disable(fn, recursive,
wrapping=...)``, as ``torch._disable_dynamo`` and ``torch.optim.Optimizer`` call them), which the stand-in
answers for: there is no public way to keep torch's optimizers from importing it. Because it copies how one
torch version calls its compiler, :func:`install` acts only on the torch minor versions it is tested on
(:data:`TESTED_TORCH`) and leaves any other torch alone, so ``pyproject.toml`` keeps a range of torch versions.
Installed by :mod:`rlrun.startup.bootstrap`.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

NAME = "torch._dynamo"

# The torch minor versions this stand-in is tested on (tests/rlrun/startup/test_lazy_dynamo.py). Add one only
# after those tests pass with it: a torch that calls its compiler in another way may need another stand-in.
TESTED_TORCH = ("2.13",)


class _StandIn(types.ModuleType):
    """``torch._dynamo`` until something needs the real one.

    Code that looks through every module in ``sys.modules`` (``inspect`` asks each for ``__file__``; pickle
    and cloudpickle look for a function's name in each when it has no ``__module__``) gets its answer here
    without loading it: only the names the real module's source binds (:func:`_real_names`) load it.
    """

    names: frozenset[str] | None = None  # None: every name loads it

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") or self.names is not None and name not in self.names:
            raise AttributeError(f"module {NAME!r} has no attribute {name!r}")
        return getattr(load(), name)


def _graph_break() -> None:
    if not isinstance(sys.modules.get(NAME), _StandIn):
        load().graph_break()


def _disable(fn: Callable[..., Any] | None = None, recursive: bool = True, **kwargs: Any) -> Any:
    """The real ``disable`` once dynamo is loaded; before, the function itself, checked again at each call."""
    if not isinstance(sys.modules.get(NAME), _StandIn):
        return load().disable(fn, recursive, **kwargs)
    # torch asks for ``disable`` as an optimizer is built, before any ``step``: bind the stand-in as torch's
    # attribute, which each step's ``torch._dynamo.graph_break()`` would otherwise look up through torch's
    # module ``__getattr__`` (3.8 us a call against 0.3, measured). The import of the real module replaces it.
    torch = sys.modules.get("torch")
    if torch is not None and torch.__dict__.get("_dynamo") is not _stand_in:
        torch._dynamo = _stand_in  # type: ignore[attr-defined]
    if fn is None:
        return functools.partial(_disable, recursive=recursive, **kwargs)
    disabled: Callable[..., Any] | None = None

    def call(*args: Any, **kw: Any) -> Any:
        nonlocal disabled
        if isinstance(sys.modules.get(NAME), _StandIn):
            return fn(*args, **kw)
        if disabled is None:
            disabled = load().disable(fn, recursive, **{**kwargs, "wrapping": False})
        return disabled(*args, **kw)

    return functools.wraps(fn)(call) if kwargs.get("wrapping", True) else call


_stand_in = _StandIn(NAME, __doc__)
_stand_in.graph_break = _graph_break  # type: ignore[attr-defined]
_stand_in.disable = _disable  # type: ignore[attr-defined]


def tested_torch() -> bool:
    """Whether the installed torch is one of the minor versions in :data:`TESTED_TORCH`."""
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    return ".".join(version.split(".")[:2]) in TESTED_TORCH


def install() -> bool:
    """Put the stand-in in place, unless ``torch._dynamo`` is already loaded, torch is not installed or is not
    a tested version; whether the stand-in is in place now."""
    if NAME in sys.modules:
        return isinstance(sys.modules[NAME], _StandIn)
    torch = importlib.util.find_spec("torch")
    if torch is None or not torch.submodule_search_locations or not tested_torch():
        return False
    spec = importlib.machinery.PathFinder.find_spec(NAME, list(torch.submodule_search_locations))
    if spec is None or spec.submodule_search_locations is None:
        return False
    _stand_in.__spec__ = spec  # the real package's spec: imports of its submodules find their files
    _stand_in.__path__ = list(spec.submodule_search_locations)
    _stand_in.names = _real_names(spec)
    sys.meta_path.insert(0, _SubmoduleFinder())
    sys.modules[NAME] = _stand_in
    return True


def _real_names(spec: importlib.machinery.ModuleSpec) -> frozenset[str] | None:
    """Every name the real package's ``__init__.py`` binds anywhere, and its submodules: a superset of its
    attributes. None where the source cannot tell (a star import, a module ``__getattr__``)."""
    if spec.origin is None or spec.submodule_search_locations is None:
        return None
    tree = ast.parse(Path(spec.origin).read_text())
    names = {module.name for module in pkgutil.iter_modules(spec.submodule_search_locations)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return frozenset(names)


def loaded() -> bool:
    """Whether the real ``torch._dynamo`` has been imported."""
    module = sys.modules.get(NAME)
    return module is not None and not isinstance(module, _StandIn)


def load() -> types.ModuleType:
    """The real ``torch._dynamo``, imported on first use."""
    if isinstance(sys.modules.get(NAME), _StandIn):
        del sys.modules[NAME]
        try:
            importlib.import_module(NAME)
        except BaseException:
            sys.modules[NAME] = _stand_in
            raise
    return sys.modules[NAME]


class _SubmoduleFinder(importlib.abc.MetaPathFinder):
    """An import of ``torch._dynamo.<sub>`` while the stand-in is in place: load the real package first.

    Loading the package usually imports ``<sub>`` too, and Python's import system would then execute it a
    second time (it looks the parent up before this finder runs). So a submodule that the package loaded is
    handed back as it is, through :class:`_Loaded`.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(NAME + ".") or not isinstance(sys.modules.get(NAME), _StandIn):
            return None
        load()
        module = sys.modules.pop(fullname, None)
        if module is None:
            return None  # not imported by the package: the path finders import it as usual
        return importlib.machinery.ModuleSpec(fullname, _Loaded(module), is_package=hasattr(module, "__path__"))


class _Loaded(importlib.abc.Loader):
    """Loads a module that is already loaded: the same object, its own spec kept."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec
