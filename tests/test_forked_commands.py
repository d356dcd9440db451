"""The tests' forked commands (tests/forked_commands.py) are processes of their own, as fresh ones are: their pid,
folder, environment, arguments, streams, exit status and signals; a command whose start must be plain runs afresh."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from rlrun.startup import bootstrap
from tests import forked_commands

PROBE = """
import json, os, sys
print(json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "argv": sys.argv, "path0": sys.path[0],
                  "marker": os.environ.get("MARKER"), "torch": "torch" in sys.modules}))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def test_a_forked_command_has_its_own_process_folder_environment_and_status(tmp_path: Path) -> None:
    env = {**os.environ, "MARKER": "given"}
    result = forked_commands.run(["-c", PROBE, "3"], cwd=tmp_path, env=env)
    seen = json.loads(result.stdout)
    assert result.returncode == 3 and result.stderr == "to stderr\n"
    assert seen["pid"] != os.getpid() and seen["cwd"] == str(tmp_path) and seen["marker"] == "given"
    assert seen["argv"] == ["-c", "3"] and seen["path0"] == ""
    assert seen["torch"]  # forked from the server, which imported it: the point of forking


def test_a_module_runs_as_python_m_runs_it(tmp_path: Path) -> None:
    (tmp_path / "probe_module.py").write_text(PROBE)
    result = forked_commands.run(["-m", "probe_module", "0"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    seen = json.loads(result.stdout)
    assert result.returncode == 0 and seen["argv"] == [str(tmp_path / "probe_module.py"), "0"]
    assert seen["path0"] == str(tmp_path)


def test_signals_reach_the_command_and_its_status_says_which(tmp_path: Path) -> None:
    sleeper = ["-c", "import time; print('started', flush=True); time.sleep(60)"]
    for signum, status in [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)]:
        command = forked_commands.Popen(sleeper, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        assert command.stdout is not None and command.stdout.readline() == "started\n"
        command.send_signal(signum)
        assert command.wait(timeout=60) == status  # a hang guard, not a timed assertion


def test_a_command_with_start_up_measures_off_or_its_own_interpreter_variables_starts_afresh(tmp_path: Path) -> None:
    for variable, value in [(bootstrap.SWITCH, "0"), ("PYTHONHASHSEED", "7")]:
        result = forked_commands.run(["-c", PROBE, "0"], cwd=tmp_path, env={**os.environ, variable: value})
        assert json.loads(result.stdout)["torch"] is False, variable
    assert forked_commands.can_fork(None) and not forked_commands.can_fork({**os.environ, bootstrap.SWITCH: "0"})
    fresh = forked_commands.Popen(["-c", ""], env={**os.environ, bootstrap.SWITCH: "0"})
    assert isinstance(fresh, subprocess.Popen) and fresh.wait(timeout=60) == 0
