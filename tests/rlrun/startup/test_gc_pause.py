"""The garbage collector is paused while ``rlrun`` starts and resumed, with start-up's objects frozen, when
training starts. In processes of their own: both are properties of
the whole process."""

from __future__ import annotations

import os
import subprocess
import sys

from rlrun.startup import bootstrap
from tests.rlrun.helpers import TINY_RUN

UNIT = """\
import gc
from rlrun.startup import gc_pause

gc_pause.resume()
assert gc.isenabled() and gc.get_freeze_count() == 0  # never paused: nothing to do
gc_pause.pause()
assert not gc.isenabled()
objects = [[] for _ in range(1000)]
gc_pause.resume()
assert gc.isenabled() and gc.get_freeze_count() >= 1000
gc.disable()
gc_pause.resume()
assert not gc.isenabled()  # disabled by someone else: left alone
print("ok")
"""

RUN = """\
import gc, sys

from rlrun.cli.main import main

sys.argv = ["rlrun", *sys.argv[1:]]
try:
    main()
finally:  # the run's end, before the exit handlers (one gives the frozen objects back to the collector)
    print(gc.isenabled(), gc.get_freeze_count() > 100_000, flush=True)
"""


def _last_line(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != bootstrap.SWITCH}  # these are the measures on
    done = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_pause_and_resume() -> None:
    assert _last_line(UNIT) == "ok"


def test_a_run_trains_with_collections_on(tmp_path) -> None:
    out = _last_line(
        RUN,
        *TINY_RUN,
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert out == "True True"  # collections on again, start-up's objects frozen
    assert (tmp_path / "run" / "model.zip").exists()
