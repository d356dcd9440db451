"""No import circles among rlrun's modules: every import, at the top of a module or inside a function, points one
way. A circle held together by a function-local import still ties its modules into one, so it counts too.

The graph holds the files under ``rlrun/``. Imports of anything else are left out: other packages, and
``rlrun.envs`` and ``rlrun.conf``, which the wheel maps from ``envs/`` and ``conf/`` (``envs/`` imports nothing of
the runner: tests/envs/test_package.py). So is what Python imports on the way to a module: importing
``rlrun.record.fields`` runs ``rlrun/__init__.py`` and ``rlrun/record/__init__.py`` first, an edge every module
would have, while an import that names a package (``import rlrun``, ``from rlrun.record import x`` where ``x`` is
no module) is an edge to its ``__init__.py`` like any other.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

RLRUN = Path(__file__).resolve().parents[2] / "rlrun"


def module_name(path: Path) -> str:
    """The dotted name of the file ``path`` under ``rlrun/`` (a package's ``__init__.py``: the package's)."""
    parts = path.relative_to(RLRUN.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(RLRUN.rglob("*.py"))}


def _base(node: ast.ImportFrom, importer: str) -> str:
    """The absolute module a ``from ... import`` names, its dots resolved against ``importer``'s package."""
    if node.level == 0:
        return node.module or ""
    package = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{anchor}.{node.module}" if node.module else anchor


def _known(name: str) -> str | None:
    """``name`` if it is one of rlrun's modules, else None."""
    return name if name in MODULES else None


def imports_of(importer: str) -> set[str]:
    """The rlrun modules ``importer`` imports anywhere in its file; ``from pkg import name`` reaches the module
    ``pkg.name`` where there is one, else ``pkg`` (``name`` is then something defined in it)."""
    tree = ast.parse(MODULES[importer].read_text(), str(MODULES[importer]))
    found: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {_known(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, importer)
            found |= {_known(f"{base}.{alias.name}") or _known(base) for alias in node.names}
    return {name for name in found if name is not None} - {importer}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each set of modules that import one another in a circle (a strongly connected component of more than one
    module, by Tarjan's algorithm, iteratively), as a sorted list; the lists sorted too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def a_circle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One circle through the first module of ``component``, as the modules met in order, the first one again at
    the end: the imports a reader follows to see it."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:  # breadth first: the shortest way round
        node = queue.pop(0)
        for child in sorted(graph[node] & inside):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    raise AssertionError(f"{component} is no circle")


def described(component: list[str], graph: dict[str, set[str]]) -> str:
    """A circle of ``component`` as a reader follows it, then every import inside the component (each one is part
    of some circle: removing the imports of one circle may leave others)."""
    inside = set(component)
    imports = [f"    {module} imports {', '.join(sorted(graph[module] & inside))}" for module in component]
    return "\n".join([" -> ".join(a_circle(component, graph)), *imports])


def test_the_graph_sees_rlrun_and_resolves_its_imports() -> None:
    graph = {module: imports_of(module) for module in MODULES}
    assert "rlrun.record.reading" in MODULES and "rlrun" in MODULES
    assert "rlrun.config.errors" in graph["rlrun.record.lock"]
    assert "rlrun.startup.headless" in graph["rlrun"]  # a module named in ``from pkg import name``
    assert all(target in MODULES for targets in graph.values() for target in targets)


def test_the_cycle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert a_circle(["a", "b", "c"], graph) == ["a", "b", "c", "a"]
    assert described(["d", "e"], graph) == "d -> e -> d\n    d imports e\n    e imports d"
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_rlrun_imports_itself_round_a_circle() -> None:
    graph = {module: imports_of(module) for module in MODULES}
    found = cycles(graph)
    shown = "\n".join(described(component, graph) for component in found)
    assert not found, f"import circles among rlrun's modules (function-local imports count too):\n{shown}"
    graphlib.TopologicalSorter(graph).prepare()  # the same, as the standard library sees it
