"""No third-party noise as an rlrun process ends: objects frozen by the paused collector (envs made while the process
started, in reference cycles) are freed by the last collection, so ale_py's bindings report no leaks at exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("ale_py")

# An ALE env made while the collector is paused, kept in a cycle and closed, as a run's envs are.
SCRIPT = """
import gymnasium as gym, ale_py
from rlrun.startup import gc_pause
gc_pause.pause()
gym.register_envs(ale_py)
env = gym.make("ALE/Pong-v5")
env.reset(seed=0)
env.close()
cycle = {"env": env}
cycle["self"] = cycle
del env, cycle
gc_pause.resume()
"""


def test_an_atari_env_made_during_start_up_leaves_no_leak_report_at_exit() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "nanobind: leaked" not in done.stderr, done.stderr
