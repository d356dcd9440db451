"""joblib's workers start from a fork server that has imported what a job needs."""

from __future__ import annotations

import os
import subprocess
import sys

from rlrun.startup import bootstrap
from rlrun.sweep import warm_up

# In a process of its own: the start method is set for the whole process, as in a sweep's.
SCRIPT = """\
import gc
import sys
from joblib import Parallel, delayed
from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher
from rlrun.sweep import warm_up


def loaded():
    full_collections = gc.get_stats()[2]["collections"]  # a forked worker starts with its server's counts
    modules = sorted(m for m in warm_up.JOB_MODULES if m in sys.modules)
    return modules, gc.get_freeze_count() > 0, gc.isenabled(), full_collections


if __name__ == "__main__":
    if sys.argv[1] == "warm":
        warm_up.start(JoblibLauncher(n_jobs=2))
    print(Parallel(n_jobs=2, backend="loky")(delayed(loaded)() for _ in range(2)))
"""


def _modules_in_workers(mode: str, tmp_path, fast_start: str | None = None) -> str:
    script = tmp_path / "workers.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != bootstrap.SWITCH}
    if fast_start is not None:
        env[bootstrap.SWITCH] = fast_start
    done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_workers_start_with_the_job_modules_imported(tmp_path) -> None:
    assert "rlrun.run.training" in warm_up.JOB_MODULES
    everything = sorted(warm_up.JOB_MODULES)
    # Imported without a full collection, frozen by the server's last preload, collecting garbage again.
    assert _modules_in_workers("warm", tmp_path) == str([(everything, True, True, 0)] * 2)
    # loky's own workers: a fresh interpreter (which loky itself may have collected in, after a first task).
    cold = _modules_in_workers("cold", tmp_path)
    assert cold.startswith("[([], False, True, ") and cold.count("([], False, True, ") == 2


def test_the_fast_start_switch_turns_the_fork_server_off(tmp_path) -> None:
    cold = _modules_in_workers("warm", tmp_path, fast_start="0")  # loky's own workers, as without warm-up
    assert cold.startswith("[([], False, True, ") and cold.count("([], False, True, ") == 2
