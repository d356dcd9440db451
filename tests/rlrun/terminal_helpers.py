"""A command run under a pseudo-terminal, as a user runs it in a terminal, and the screen it leaves (shared by the
live-view tests of sweeps and studies)."""

from __future__ import annotations

import os
import pty
import re
import select
import time
from pathlib import Path

from tests import forked_commands

COLUMNS = 200  # the pseudo-terminal's width
CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


# A PPO run on an env whose every step sleeps 10 ms: 256 steps, an evaluation (and run.json rewritten) every 64,
# so it trains for seconds after its first evaluation (the live views' and the timed lines' tests)
SLEEPY_RUN = [
    "env=gym",
    "env.id=tests.rlrun.run.slow_envs:slow/Sleepy-v0",
    "algo=ppo",
    "env.n_envs=1",
    "total_timesteps=256",
    "algo.n_steps=64",
    "algo.batch_size=32",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=64",
    "eval.episodes=1",
    "eval.final_episodes=1",
    "eval.n_envs=1",
    "snapshot.every=256",
]


def run_in_terminal(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float = 300) -> tuple[int, str]:
    """Run ``python ARGV`` (forked: :mod:`tests.forked_commands`) with a pseudo-terminal as its stdin, stdout and
    stderr; its exit status and all it wrote (the terminal's escapes included)."""
    main, other = pty.openpty()
    env = {**env, "COLUMNS": str(COLUMNS), "LINES": "50", "TERM": "xterm"}
    process = forked_commands.Popen(argv, cwd=cwd, env=env, stdin=other, stdout=other, stderr=other)
    os.close(other)
    written = b""
    deadline = time.monotonic() + timeout_s  # a hang guard only
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            data = os.read(main, 65536)
        except OSError:  # the terminal closed: every process writing to it has ended
            break
        if not data:
            break
        written += data
    os.close(main)
    return process.wait(timeout=max(deadline - time.monotonic(), 1)), written.decode(errors="replace")


def screen(written: str) -> list[str]:
    """The lines a terminal shows once ``written`` is drawn: text, carriage returns and newlines, and the escapes
    rich uses to redraw in place (cursor up, erase the line); other escapes (colours, the cursor shown) drawn as
    nothing. Trailing blank lines dropped."""
    lines: list[list[str]] = [[]]
    row = col = 0
    position = 0
    for match in [*CSI.finditer(written), None]:
        end = match.start() if match else len(written)
        for char in written[position:end]:
            if char == "\r":
                col = 0
            elif char == "\n":
                row += 1
                col = 0
                while len(lines) <= row:
                    lines.append([])
            elif char.isprintable():
                line = lines[row]
                if len(line) <= col:
                    line.extend(" " * (col - len(line) + 1))
                line[col] = char
                col += 1
        if match is None:
            break
        position = match.end()
        params, command = match.groups()
        count = int(params) if params.isdigit() else 1
        if command == "A":
            row = max(row - count, 0)
        elif command == "K":
            lines[row] = [] if params == "2" else lines[row][:col]  # the whole line, or from the cursor on
    shown = ["".join(line).rstrip() for line in lines]
    while shown and not shown[-1]:
        shown.pop()
    return shown
