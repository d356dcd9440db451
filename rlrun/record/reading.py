"""Readers with limits for the files of a run folder (YAML, JSON, CSV), which may come from anyone.

A file is read only as a regular file with one name (never through a link, never a FIFO or a device), only up to
a size, and its YAML or JSON only up to a nesting depth and, for YAML, a number of nodes once its aliases are
expanded (a 1 KB "billion laughs" document expands to billions). A file over a bound raises :class:`OverBound` (a
``ValueError``): its reader counts it as damaged, never hangs or raises a ``RecursionError``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from rlrun.record.regular_files import NotRegularFile, open_regular

MAX_TEXT_BYTES = 8 << 20  # config.yaml, run.json, manifests: kilobytes when rlrun writes them
MAX_CSV_BYTES = 64 << 20  # eval.csv: about a million evaluations
MAX_DEPTH = 64  # rlrun's own configs nest 5 deep
MAX_NODES = 200_000  # YAML nodes with aliases expanded; a config holds a few hundred


class OverBound(ValueError):
    """A file of a run folder beyond a bound of :mod:`rlrun.record.reading` (or not a regular file)."""


def read_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The text of the regular file ``path`` (UTF-8), at most ``limit`` bytes. Raises ``FileNotFoundError``
    when it is missing, :class:`OverBound` when it is larger, a link (symbolic or hard) or not a regular file (a
    FIFO is refused without waiting on it: :func:`rlrun.record.regular_files.open_regular`)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except NotRegularFile as refused:
        raise OverBound(f"{path.name} is {refused.what}, not a regular file with one name") from None
    with os.fdopen(fd, "rb") as file:
        if os.fstat(file.fileno()).st_size > limit:
            raise OverBound(f"{path.name} is larger than {limit >> 20} MiB")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OverBound(f"{path.name} is larger than {limit >> 20} MiB")
    return data.decode("utf-8")


def _depth(value: Any) -> int:
    """The nesting depth of parsed JSON, iteratively (no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_json(path: Path) -> Any:
    """The JSON document at ``path`` within the bounds; raises ``OSError`` or ``ValueError`` (:class:`OverBound`)."""
    text = read_text(path)
    try:
        data = json.loads(text)
    except RecursionError:
        raise OverBound(f"{path.name} nests deeper than {MAX_DEPTH} levels") from None
    if _depth(data) > MAX_DEPTH:
        raise OverBound(f"{path.name} nests deeper than {MAX_DEPTH} levels")
    return data


def _count(node: yaml.Node, depth: int, memo: dict[int, int]) -> int:
    """Nodes under ``node`` with aliases expanded (each shared node counted where it is used), memoised."""
    if depth > MAX_DEPTH:
        raise OverBound(f"nests deeper than {MAX_DEPTH} levels")
    if id(node) in memo:
        return memo[id(node)]
    total = 1
    if isinstance(node, yaml.MappingNode):
        total += sum(_count(k, depth + 1, memo) + _count(v, depth + 1, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        total += sum(_count(item, depth + 1, memo) for item in node.value)
    memo[id(node)] = min(total, MAX_NODES + 1)
    return memo[id(node)]


def checked_yaml(path: Path) -> tuple[str, yaml.Node | None]:
    """The text of the YAML file at ``path`` and its node graph, once both are within the bounds; raises
    ``OSError`` or ``ValueError`` (:class:`OverBound`, or what makes it invalid YAML)."""
    text = read_text(path)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _count(node, 1, {}) > MAX_NODES:
            raise OverBound(f"{path.name} expands to more than {MAX_NODES} nodes (aliases)")
    except OverBound as error:
        raise OverBound(f"{path.name} {error}" if str(error).startswith("nests") else str(error)) from None
    except RecursionError:
        raise OverBound(f"{path.name} nests deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path.name} is not valid YAML ({str(error).splitlines()[0]})") from None
    finally:
        loader.dispose()
    return text, node


def load_yaml(path: Path) -> Any:
    """The YAML document at ``path`` (safe loading) within the bounds (:func:`checked_yaml`). A tag safe loading
    does not construct (``!!python/object/apply``: a file trying to run code) raises ``ValueError``: nothing of it
    is ever constructed."""
    text, node = checked_yaml(path)
    if node is None:
        return None
    loader = yaml.SafeLoader(text)
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as error:  # ConstructorError: a tag of no plain data
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValueError(f"{path.name} holds what rlrun never loads ({problem})") from None
    finally:
        loader.dispose()
