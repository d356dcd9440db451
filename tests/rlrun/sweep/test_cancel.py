"""Stopping a SLURM sweep cancels its jobs that have not started (issue 20, point 2).

There is no SLURM here, so the test puts a scheduler of its own on ``PATH``: ``sbatch`` queues the array and
starts nothing, ``sacct`` reports its tasks ``PENDING`` (or ``CANCELLED`` once cancelled) and ``scancel`` logs
its arguments. submitit and Hydra's launcher run unchanged against it, exactly as on a cluster whose queue is
full (``srun`` only has to exist). Without the cancellation the sweep's process would wait on its queued jobs
for ever after SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests import forked_commands
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS

SBATCH = """
    import json, re, sys
    from pathlib import Path
    state = Path(sys.argv[0]).parent / "state.json"
    jobs = json.loads(state.read_text()) if state.exists() else {}
    script = Path(sys.argv[-1]).read_text()
    array = re.search(r"--array=0-(\\d+)", script)
    job_id = str(4000 + len(jobs))
    jobs[job_id] = {"tasks": int(array.group(1)) + 1 if array else 1, "cancelled": False}
    state.write_text(json.dumps(jobs))
    print(f"Submitted batch job {job_id}")
"""
SACCT = """
    import json, sys
    from pathlib import Path
    state = Path(sys.argv[0]).parent / "state.json"
    jobs = json.loads(state.read_text()) if state.exists() else {}  # the sweep asks first whether sacct answers
    print("JobID|State|NodeList")
    for job_id, job in jobs.items():
        for task in range(job["tasks"]):
            print(f"{job_id}_{task}|{'CANCELLED' if job['cancelled'] else 'PENDING'}|None assigned")
"""
SCANCEL = """
    import json, sys
    from pathlib import Path
    here = Path(sys.argv[0]).parent
    with open(here / "scancel.log", "a") as log:
        log.write(" ".join(sys.argv[1:]) + "\\n")
    jobs = json.loads((here / "state.json").read_text())
    for job_id in sys.argv[1:]:
        if job_id in jobs and "--state=PENDING" in sys.argv:
            jobs[job_id]["cancelled"] = True
    (here / "state.json").write_text(json.dumps(jobs))
"""


def fake_slurm(folder: Path) -> Path:
    """``sbatch``, ``sacct`` and ``scancel`` of a cluster whose queue never starts a job."""
    folder.mkdir()
    never = "import sys; sys.exit('srun: not on this cluster')"  # submitit only checks that srun exists
    for name, body in {"sbatch": SBATCH, "sacct": SACCT, "scancel": SCANCEL, "srun": never}.items():
        path = folder / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
        path.chmod(0o755)
    return folder


def test_a_stopped_slurm_sweep_cancels_its_queued_jobs(tmp_path: Path) -> None:
    slurm = fake_slurm(tmp_path / "slurm")
    args = [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=queued", "hydra/launcher=slurm", "hydra.launcher.partition=cpu"]
    with open(tmp_path / "sweep.out", "wb") as out:
        sweep = forked_commands.Popen(
            ["-m", "rlrun", "-m", *args],
            cwd=tmp_path,
            env={**os.environ, "PATH": f"{slurm}{os.pathsep}{os.environ['PATH']}", "HYDRA_FULL_ERROR": "0"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    sweep_dir = tmp_path / "outputs" / "sweeps" / "queued"
    deadline = time.monotonic() + 120
    while not (slurm / "state.json").exists() and sweep.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (slurm / "state.json").exists(), (tmp_path / "sweep.out").read_text()
    time.sleep(2)  # the sweep waits on its queued jobs (submitit polls sacct)
    assert sweep.poll() is None, (tmp_path / "sweep.out").read_text()

    sweep.send_signal(signal.SIGTERM)
    try:
        status = sweep.wait(timeout=120)
    except subprocess.TimeoutExpired:
        sweep.kill()
        raise AssertionError("the stopped sweep still waits on its queued jobs") from None

    output = (tmp_path / "sweep.out").read_text()
    assert status == 128 + signal.SIGTERM, output
    array = next(iter(json.loads((slurm / "state.json").read_text())))
    assert (slurm / "scancel.log").read_text().split() == ["--state=PENDING", array]
    assert "cancelled the sweep's SLURM jobs not started yet" in output
    record = json.loads((sweep_dir / "sweep.json").read_text())
    assert [job["status"] for job in record["jobs"]] == ["not_started", "not_started"]
    assert not (sweep_dir / ".stopping").exists()


def test_only_a_slurm_launcher_has_queued_jobs_to_cancel(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from rlrun.sweep.cancel import queued_job_canceller, submitted_arrays

    local = OmegaConf.create({"_target_": "x.LocalLauncher", "submitit_folder": str(tmp_path / "%j")})
    assert queued_job_canceller(local) is None
    assert queued_job_canceller(OmegaConf.create({"_target_": "x.JoblibLauncher"})) is None
    slurm = OmegaConf.create({"_target_": "x.SlurmLauncher", "submitit_folder": str(tmp_path / "%j")})
    assert queued_job_canceller(slurm) is not None
    for name in ("12_0", "12_1", "7", "notes", "13_x"):
        (tmp_path / name).mkdir()
    assert submitted_arrays(tmp_path) == ["7", "12"]
