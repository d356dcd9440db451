"""Test helper run as a subprocess: ``python -m rlrun`` that sends itself stop signals during training.

Usage (from the repository root):
  python -m tests.rlrun.signal_run <SIGNAL> <count> <step> <self|group> <rlrun override>...

After the periodic evaluation at step ``step`` (the first at or after it), the process sends ``count``
signals to itself (``self``) or to its whole process group (``group``: what a Ctrl-C in a terminal or a
cluster's SIGTERM does, so subprocess env workers get them too; start this helper in its own session).
Before rlrun starts, a handler of another library is installed for every stop signal (as submitit does
for SIGUSR2): it exits with status 99, so a run that ends with 99 ran without rlrun's handlers in force.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

from rlrun.cli import main as cli
from rlrun.run.evaluation import EvalResult, PeriodicEvaluation
from rlrun.run.signals import SIGNALS


def foreign_handler(signum: int, frame: FrameType | None) -> None:
    os._exit(99)


def main() -> None:
    name, count, step, target, overrides = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
    signum = signal.Signals[name]
    original = PeriodicEvaluation.run_evaluation
    sent = False

    def run_evaluation(self: PeriodicEvaluation) -> EvalResult:
        nonlocal sent
        result = original(self)
        if self.num_timesteps >= step and not sent:
            sent = True
            for _ in range(count):
                if target == "group":
                    os.killpg(os.getpgrp(), signum)
                else:
                    os.kill(os.getpid(), signum)
        return result

    PeriodicEvaluation.run_evaluation = run_evaluation  # type: ignore[method-assign]
    for each in SIGNALS:
        signal.signal(each, foreign_handler)
    sys.argv = ["rlrun", *overrides]
    cli.main()


if __name__ == "__main__":
    main()
