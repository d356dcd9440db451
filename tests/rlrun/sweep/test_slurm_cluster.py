"""Sweeps on a real SLURM cluster, as a user runs them (``python -m rlrun -m ... hydra/launcher=slurm``).

The cluster is the one ``tools/slurm/start.sh`` starts on this machine (SLURM 22.05 from Debian: one node, its
CPUs consumable, accounting off as on many small clusters, a requeued job held 11 s): CI starts it before these
tests (``pytest -m cluster``). They are skipped only where ``sbatch`` is missing, and fail instead when
``RLRUN_CLUSTER_REQUIRED=1`` (as in CI). Budgets are tiny but for the time limits': SLURM's smallest limit is a
minute, and its warning signal may come a minute early (rlrun/sweep/slurm_signal.py), so a job that is to reach
its limit twice trains for about five minutes (its limit lifted after the second, so that a loaded machine needs no
more).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.rlrun.helpers import assert_same_results
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS

pytestmark = pytest.mark.cluster

# every job: one CPU (two run at once on a 2-core node), little memory, no progress lines between the jobs' own
ON_SLURM = ["hydra/launcher=slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1", "progress_every=0"]
# GridWorld with its preset (8 envs, rollouts of 1024 steps), evaluated rarely: the time-limited job's config
GRIDWORLD_PRESET = ["env=gridworld", "algo=ppo", "seed=0", "eval.episodes=2", "eval.final_episodes=2", "eval.n_envs=2"]
ROLLOUT = 1024  # its steps per rollout: budgets are whole rollouts
LIMITED_TRAINING_S = 300  # what the time-limited job trains: more than two segments of at most 120 s
HANG_GUARD_S = 1800


@pytest.fixture(scope="module", autouse=True)
def slurm() -> Iterator[None]:
    """SLURM's commands, and a cluster that answers (else: how to start one)."""
    if shutil.which("sbatch") is None:
        reason = "no SLURM here (sbatch is missing): sudo tools/slurm/start.sh installs and starts a one-node cluster"
        if os.environ.get("RLRUN_CLUSTER_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    answer = subprocess.run(["sinfo", "--noheader", "--format=%t"], capture_output=True, text=True, timeout=60)
    states = answer.stdout.split()
    assert answer.returncode == 0 and {"idle", "mix", "alloc"} & set(states), (
        f"SLURM does not answer or has no node ready (sinfo: {answer.stdout}{answer.stderr}): "
        "start it with sudo tools/slurm/start.sh"
    )
    yield


def sweep_command(args: list[str]) -> list[str]:
    """``python -m rlrun -m args``, a process of its own, as a user starts it."""
    return [sys.executable, "-m", "rlrun", "-m", *args]


def run_sweep(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sweep_command(args), cwd=cwd, capture_output=True, text=True, timeout=HANG_GUARD_S, check=False
    )


def start_sweep(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(sweep_command(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def sweep_record(sweep_dir: Path) -> dict:
    return json.loads((sweep_dir / "sweep.json").read_text())


def queued() -> set[str]:
    """The ids of every job SLURM lists now."""
    return set(subprocess.run(["squeue", "--noheader", "--format=%i"], capture_output=True, text=True).stdout.split())


def test_a_two_job_sweep_completes_and_says_once_that_slurm_keeps_no_accounting(tmp_path: Path) -> None:
    args = [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=two", *ON_SLURM, "hydra.launcher.timeout_min=10"]
    done = run_sweep(args, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    data = sweep_record(tmp_path / "outputs" / "sweeps" / "two")
    assert data["launcher"] == "slurm" and data["counts"]["completed"] == 2, data
    # one line says that accounting is off; submitit's warning at each of its polls, and sacct's own, are gone
    assert output.count("SLURM keeps no accounting here (sacct: Slurm accounting storage is disabled)") == 1
    assert output.count("accounting storage is disabled") == 1, output
    assert "Bypassing sacct error" not in output
    for job in data["jobs"]:  # the sweep's command, not the process submitit started the job with
        assert record(tmp_path / "outputs" / "sweeps" / "two" / job["folder"])["command"] == data["command"]


def limited_budget(tmp_path: Path) -> int:
    """The steps the time-limited job trains in about :data:`LIMITED_TRAINING_S` seconds on this machine, as a
    short run of the same config measures them."""
    args = [*GRIDWORLD_PRESET, "total_timesteps=16384", "eval.every=100000", "hydra.run.dir=speed"]
    done = subprocess.run(
        [sys.executable, "-m", "rlrun", *args], cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert done.returncode == 0, done.stderr
    fps = record(tmp_path / "speed")["fps"]
    return max(4, round(fps * LIMITED_TRAINING_S / ROLLOUT)) * ROLLOUT


def lift_the_limit_after_two_requeues(process: subprocess.Popen[str], sweep_dir: Path, before: set[str]) -> None:
    """Once the job has been requeued twice, lift its time limit (``scontrol update``, as an administrator may), so
    that it ends in this segment however fast this machine trains (a loaded one needs more segments than the
    budget was measured for)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while process.poll() is None and time.monotonic() < deadline:
        runs = list(sweep_dir.glob("*/*/seed-0/run.json"))
        resumes = json.loads(runs[0].read_text()).get("resumes", []) if runs else []
        if len(resumes) >= 2 and (jobs := queued() - before):
            (job_id,) = jobs
            subprocess.run(["scontrol", "update", f"JobId={job_id}", "TimeLimit=60"], check=True, timeout=60)
            return
        time.sleep(0.5)


def test_a_job_stopped_by_its_time_limit_twice_is_requeued_and_ends_as_a_run_never_stopped(tmp_path: Path) -> None:
    budget = limited_budget(tmp_path)
    config = [*GRIDWORLD_PRESET, f"total_timesteps={budget}", f"eval.every={budget // 4}", f"snapshot.every={budget}"]
    # the same run, never stopped, meanwhile on the machine's other core
    reference = subprocess.Popen(
        [sys.executable, "-m", "rlrun", *config, "hydra.run.dir=reference"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # the shortest limit SLURM can warn a minute into (rlrun/sweep/slurm_signal.py)
    limits = ["hydra.launcher.timeout_min=3", "hydra.launcher.signal_delay_s=60", "hydra.launcher.max_num_timeout=8"]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "limited"
    before = queued()
    process = subprocess.Popen(
        sweep_command([*config, "sweep=limited", *ON_SLURM, *limits]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lift_the_limit_after_two_requeues(process, sweep_dir, before)
        stdout, stderr = process.communicate(timeout=HANG_GUARD_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert reference.wait(timeout=HANG_GUARD_S) == 0
    assert process.returncode == 0, stdout + stderr
    data = sweep_record(sweep_dir)
    job = sweep_dir / data["jobs"][0]["folder"]
    run = record(job)
    assert run["status"] == "completed" and run["timesteps"] >= budget
    assert len(run["resumes"]) >= 2, run["resumes"]  # stopped by its time limit twice at least
    assert (job / "rlrun.log").read_text().count("interrupted by SIGUSR2") == len(run["resumes"])
    # each resume names the sweep's command and the requeue, never submitit's _submit.py
    for resume in run["resumes"]:
        assert re.fullmatch(re.escape(data["command"]) + r"  # requeued by SLURM \(job \d+(_\d+)?\)", resume["command"])
    assert_same_results(job, tmp_path / "reference")
    # the sweep's lines follow the job through its requeues, and the last one and the summary tell its end
    lines = [line for line in stdout.splitlines() if line.startswith("[1/1] ")]
    folder = data["jobs"][0]["folder"]
    for resume in run["resumes"]:
        assert f"[1/1] {folder}: interrupted, at step {resume['from_step']}," in "\n".join(lines)
        assert f"[1/1] {folder}: started again by its scheduler, resuming from step {resume['from_step']}" in lines
    assert lines[-1].startswith(f"[1/1] {folder}: completed, mean return ")
    assert lines[-1].endswith(f", {run['wall_s']:.1f} s")
    assert data["jobs"][0]["status"] == "completed" and data["jobs"][0]["wall_s"] == run["wall_s"]
    assert "(slurm launcher): 1 job: 1 completed" in stdout


def test_scancel_of_a_running_job_ends_it_interrupted_and_the_same_command_completes_it(tmp_path: Path) -> None:
    args = [*GRIDWORLD_2048_STEPS, "total_timesteps=16384", "seed=0", "sweep=cancelled"]
    args += [*ON_SLURM, "hydra.launcher.timeout_min=10"]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "cancelled"
    before = queued()
    process = start_sweep(args, tmp_path)
    try:
        deadline = time.monotonic() + 600
        while not list(sweep_dir.glob("*/*/seed-0/snapshots/step-*/manifest.json")):
            assert process.poll() is None and time.monotonic() < deadline, "the job never wrote a snapshot"
            time.sleep(0.2)
        (job_id,) = queued() - before
        subprocess.run(["scancel", job_id], check=True, timeout=60)
        output = process.communicate(timeout=HANG_GUARD_S)[0]
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, output
    data = sweep_record(sweep_dir)
    job = sweep_dir / data["jobs"][0]["folder"]
    run = record(job)
    assert data["jobs"][0]["status"] == run["status"] == "interrupted", output
    assert "interrupted by SIGTERM" in (job / "rlrun.log").read_text()
    snapshots = {int(path.parent.name.removeprefix("step-")) for path in job.glob("snapshots/step-*/manifest.json")}
    assert run["timesteps"] in snapshots  # written where it stopped
    assert f"{data['jobs'][0]['folder']}: interrupted, at step {run['timesteps']}" in output

    again = run_sweep(args, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    run = record(job)
    assert sweep_record(sweep_dir)["counts"]["completed"] == 1 and run["status"] == "completed"
    assert run["resumes"][-1]["command"] == sweep_record(sweep_dir)["command"]  # the command a person typed


def test_a_signal_slurm_may_send_before_any_training_is_refused_before_submission(tmp_path: Path) -> None:
    before = queued()
    args = ["seed=0", *ON_SLURM, "hydra.launcher.timeout_min=1", "hydra.launcher.signal_delay_s=30"]
    done = run_sweep(args, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rlrun: error: hydra.launcher.signal_delay_s=30 with hydra.launcher.timeout_min=1" in done.stderr
    assert "60-second resolution" in done.stderr and "fix: hydra.launcher.timeout_min=3 (or more)" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "outputs").exists() and queued() == before  # nothing written, nothing submitted
