"""What the README's and docs' console blocks are, and how a documented output is compared with the real one
(numbers, run stamps and absolute paths aside; ``...`` stands for lines a page leaves out): shared by
tests/test_readme.py and tests/test_docs.py."""

from __future__ import annotations

import re


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block of ``text``: its commands (``$ ...``) with the output lines shown under each."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, re.S):
        commands: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            else:
                commands[-1][1].append(line)
        blocks.append(commands)
    return blocks


def shape(line: str) -> str:
    """A line with what changes from run to run made constant: absolute paths, run stamps and numbers."""
    line = re.sub(r"/\S*?/(conf|outputs)/", r"<dir>/\1/", line)
    line = re.sub(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\w{4}", "<stamp>", line)
    return re.sub(r"-?\d[\d,.]*", "#", line)


def matches(documented: list[str], real: list[str]) -> bool:
    """Whether the documented lines are the real ones in order, ``...`` standing for any number of lines."""
    pattern = "".join(".*?\n" if line == "..." else re.escape(shape(line) + "\n") for line in documented)
    return re.fullmatch(pattern, "".join(shape(line) + "\n" for line in real), re.S) is not None
