"""A sweep stopped with Ctrl-C says so: each job stopped through the sweep's stop marker reports the sweep's
own signal (SIGINT), not the SIGTERM it is handed internally."""

from __future__ import annotations

import signal
from pathlib import Path

from rlrun.sweep.job import STOP_FILE, _sweep_signal
from tests.rlrun.sweep_helpers import TWO_JOB_SWEEP, running_jobs, start_sweep, wait_until_gone


def test_the_stop_marker_names_the_sweeps_signal(tmp_path: Path) -> None:
    (tmp_path / STOP_FILE).write_text("SIGINT\n")
    assert _sweep_signal(tmp_path) == signal.SIGINT
    (tmp_path / STOP_FILE).unlink()
    assert _sweep_signal(tmp_path) == signal.SIGTERM  # the sweep's process gone: no marker


def test_sigint_to_the_sweep_alone_reports_its_jobs_interrupted_by_sigint(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "outputs" / "sweeps" / "ctrl-c"
    process = start_sweep([*TWO_JOB_SWEEP, "sweep=ctrl-c"], tmp_path)
    processes = running_jobs(process, sweep_dir, 2)
    process.send_signal(signal.SIGINT)  # the sweep's process alone, as a Ctrl-C its workers do not get
    process.wait(timeout=120)
    output = (tmp_path / "sweep.out").read_text()
    assert process.returncode == 130, output
    assert wait_until_gone(processes, 30) == set(), output
    logs = [log.read_text() for log in sweep_dir.glob("gridworld-ppo/*/seed-*/rlrun.log")]
    assert len(logs) == 2 and all("interrupted by SIGINT" in log for log in logs), logs
    assert "SIGTERM" not in output + "".join(logs)
