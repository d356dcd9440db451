"""Sweeps on the cluster launchers, run as a user runs them (``python -m rlrun -m ...`` in a subprocess).

submitit's local executor stands in for SLURM (same submitit code: its USR2 handler, checkpoint and
requeue), and the Ray test starts its own head on 127.0.0.1 and stops it. Budgets are tiny; a job that
is to be warned runs long enough to be stopped between two snapshots.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import assert_same_results, compose_config, free_port
from tests.rlrun.sweep_helpers import GRIDWORLD_4096_STEPS, sweep_command


@pytest.mark.parametrize(
    ("overrides", "target", "values"),
    [
        pytest.param(
            ["hydra/launcher=slurm", "hydra.launcher.partition=cpu"],
            "hydra_plugins.rlrun_slurm_launcher.slurm_launcher.RlrunSlurmLauncher",
            {"partition": "cpu", "signal_delay_s": 120, "max_num_timeout": 3, "cpus_per_task": 2, "timeout_min": 240},
            id="slurm",
        ),
        pytest.param(
            ["hydra/launcher=ray"],
            "hydra_plugins.rlrun_ray_launcher.ray_launcher.RayLauncher",
            {
                "ray": {
                    "init": {"address": None, "num_cpus": None, "object_store_memory": None},
                    "remote": {"num_cpus": 1, "max_retries": 0},
                }
            },
            id="ray",
        ),
    ],
)
def test_rlrun_launcher_configs_compose(overrides: list[str], target: str, values: dict) -> None:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    settings = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert isinstance(settings, dict) and settings["_target_"] == target
    assert {key: settings[key] for key in values} == values


def sweep(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(sweep_command(args), cwd=cwd, env=env, timeout=400)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def sweep_record(sweep_dir: Path) -> dict:
    return json.loads((sweep_dir / "sweep.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 0 of ``GRIDWORLD_4096_STEPS`` trained without a stop, in this process."""
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    train(compose_config(*GRIDWORLD_4096_STEPS, "seed=0"), run_dir)
    return run_dir


def signal_when_snapshotted(
    process: subprocess.Popen[str], sweep_dir: Path, job: str, signum: int = signal.SIGUSR2
) -> Path:
    """Send ``signum`` (by default SIGUSR2, SLURM's and submitit's warning before a time limit) to the process
    training ``job`` once it has written its first snapshot, so it is inside training with rlrun's handler."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        for run_dir in sweep_dir.glob(job):
            if list(run_dir.glob("snapshots/step-*/manifest.json")) and (run_dir / "run.json").exists():
                os.kill(record(run_dir)["pid"], signum)
                return run_dir
        time.sleep(0.05)
    output = process.communicate(timeout=60)[0] if process.poll() is not None else "(still running)"
    raise AssertionError(f"{job} never wrote a snapshot; the sweep said:\n{output}")


def test_submitit_job_warned_by_usr2_ends_interrupted_and_the_same_command_continues_it(
    tmp_path: Path, reference: Path
) -> None:
    # a time limit of 5 minutes is always "timed out" for submitit and max_num_timeout=0 forbids a requeue,
    # as on a cluster whose job has used up its requeues: the job must end interrupted, never failed
    args = [
        *GRIDWORLD_4096_STEPS,
        "seed=0,1",
        "sweep=cluster",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=5",
        "+hydra.launcher.max_num_timeout=0",
    ]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "cluster"
    process = forked_commands.Popen(
        sweep_command(args), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    warned = signal_when_snapshotted(process, sweep_dir, "gridworld-ppo/*/seed-0")
    output, _ = process.communicate(timeout=400)
    assert process.returncode == 1, output
    assert record(warned)["status"] == "interrupted"
    data = sweep_record(sweep_dir)
    assert data["launcher"] == "submitit_local"
    assert {job["folder"].rsplit("/", 1)[1]: job["status"] for job in data["jobs"]} == {
        "seed-0": "interrupted",
        "seed-1": "completed",
    }
    log = (warned / "rlrun.log").read_text()
    assert "interrupted by SIGUSR2" in log and "not requeue" in log

    again = sweep(args, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    data = sweep_record(sweep_dir)
    assert data["counts"]["completed"] == 1 and data["counts"]["skipped"] == 1
    assert record(warned)["status"] == "completed"
    assert_same_results(warned, reference)


def test_submitit_requeues_a_job_warned_by_usr2_and_the_requeue_resumes_it(tmp_path: Path, reference: Path) -> None:
    # submitit_local's defaults: a 60-minute limit, so a USR2 now is a pre-emption, which submitit requeues
    args = [*GRIDWORLD_4096_STEPS, "seed=0", "sweep=preempted", "hydra/launcher=submitit_local"]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "preempted"
    process = forked_commands.Popen(
        sweep_command(args), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    warned = signal_when_snapshotted(process, sweep_dir, "gridworld-ppo/*/seed-0")
    output, _ = process.communicate(timeout=400)
    assert process.returncode == 0, output  # one command: the requeued job finished the run
    log = (warned / "rlrun.log").read_text()
    assert log.index("interrupted by SIGUSR2") < log.index("Requeued job") < log.index("resuming")
    assert record(warned)["status"] == "completed"
    assert_same_results(warned, reference)


@dataclass
class RayHead:
    address: str
    env: dict[str, str]  # for the commands that use it: its own authentication token


@pytest.fixture
def ray_head() -> Iterator[RayHead]:
    """A Ray head on 127.0.0.1 (its own ports and token, no dashboard, 2 CPUs), stopped afterwards."""
    port = free_port()
    # a token of its own, not ~/.ray/auth_token, which any other Ray on this machine may create or replace
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    head = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("ray")),  # the ray command of this environment
            "start",
            "--head",
            "--block",  # stays in the foreground: terminating it stops the processes it started
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--include-dashboard=false",
            "--num-cpus=2",
            f"--ray-client-server-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            "--object-store-memory=100000000",
            "--disable-usage-stats",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
                time.sleep(0.2)
        yield RayHead(f"127.0.0.1:{port}", env)
    finally:
        head.terminate()
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)  # the head's own process group: nothing else
            head.wait()


def test_ray_sweep_on_a_running_cluster_survives_a_killed_worker_and_the_same_command_continues(
    tmp_path: Path, ray_head: RayHead, reference: Path
) -> None:
    address = f"hydra.launcher.ray.init.address={ray_head.address}"
    args = [*GRIDWORLD_4096_STEPS, "seed=0,1", "sweep=ray", "hydra/launcher=ray", address]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "ray"
    process = forked_commands.Popen(
        sweep_command(args), cwd=tmp_path, env=ray_head.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    killed = signal_when_snapshotted(process, sweep_dir, "gridworld-ppo/*/seed-0", signal.SIGKILL)
    output, _ = process.communicate(timeout=400)
    assert process.returncode == 1, output  # Ray's error for the lost worker did not stop the sweep
    data = sweep_record(sweep_dir)
    assert record(sweep_dir / data["jobs"][1]["folder"])["pid"] != process.pid  # it ran in a Ray worker
    assert data["launcher"] == "ray"
    assert {job["folder"].rsplit("/", 1)[1]: job["status"] for job in data["jobs"]} == {
        "seed-0": "interrupted",
        "seed-1": "completed",
    }

    again = sweep(args, tmp_path, ray_head.env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert sweep_record(sweep_dir)["counts"]["skipped"] == 1
    assert record(killed)["status"] == "completed"
    assert_same_results(killed, reference)
