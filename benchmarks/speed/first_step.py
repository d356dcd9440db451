"""Run a Python module as ``python -m MODULE ARGS...`` would, and stop the process at its first env step.

``python benchmarks/speed/first_step.py STAMP_FILE MODULE ARGS...`` writes ``time.time()`` at the first
``step`` of any env made by ``gym.make`` (Gymnasium's ``OrderEnforcing`` wraps every such env) into
STAMP_FILE, then exits at once. The caller takes the time before it starts the process, so the
difference is the whole start-up: interpreter, imports, config, env and model construction. The same
harness runs rlrun and RL Zoo, so both pay the same for it; it needs only the standard library and
Gymnasium, which both import anyway.
"""

from __future__ import annotations

import os
import runpy
import sys
import time


def main() -> None:
    """Patch the first env step, then hand over to the module."""
    stamp, module, *args = sys.argv[1:]
    from gymnasium.wrappers import common

    def first_step(self, action):  # type: ignore[no-untyped-def]
        with open(stamp, "w") as f:
            f.write(repr(time.time()))
        os._exit(0)

    common.OrderEnforcing.step = first_step  # type: ignore[method-assign]
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
