"""Test helper run as a subprocess: train, and SIGKILL this process in the middle of writing snapshot 2.

Usage (from the repository root): python -m tests.rlrun.kill_during_snapshot <run_dir> <override>...
"""

from __future__ import annotations

import os
import signal
import sys

from rlrun import snapshots
from rlrun.train import train
from tests.rlrun.helpers import compose_config, shrink

written = 0
original_save = snapshots.BaseAlgorithm.save


def save_then_die(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Write the model file of the second snapshot, then die before the snapshot is complete."""
    global written
    original_save(self, path, *args, **kwargs)
    if ".tmp-step-" in str(path):
        written += 1
        if written == 2:
            os.kill(os.getpid(), signal.SIGKILL)


snapshots.BaseAlgorithm.save = save_then_die  # type: ignore[method-assign]
cfg = shrink(compose_config(*sys.argv[2:]), 1024)
cfg.snapshot.every = 256
train(cfg, sys.argv[1])
