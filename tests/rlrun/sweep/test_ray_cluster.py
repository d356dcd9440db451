"""Sweeps on a real two-node Ray cluster on 127.0.0.1, joined by address as a user joins one
(``hydra/launcher=ray hydra.launcher.ray.init.address=HOST:PORT``).

The cluster is this module's: ``ray start --head`` and ``ray start --address=...`` as a second node (the ray command
of this environment, one CPU each, temp folders and an authentication token of their own), stopped at the end. It is
stopped by its own processes, not with ``ray stop``, which ends every Ray of this user on the machine (another
test's, a person's). Marked ``cluster``: ``pytest -m cluster`` runs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

if os.environ.get("RLRUN_CLUSTER_REQUIRED") != "1":
    pytest.importorskip("ray", reason="no Ray here: pip install 'rlrun[ray]'")
import psutil  # noqa: E402  (a dependency of Ray's)

from tests.rlrun.helpers import free_port  # noqa: E402
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS  # noqa: E402

pytestmark = pytest.mark.cluster
HANG_GUARD_S = 600


@dataclass
class Cluster:
    address: str
    env: dict[str, str]  # for the commands that use it: its authentication token
    head: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes]
    worker_dir: Path  # the worker node's temp folder, which every process of it names


def ray_start(*options: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``ray start --block ...``: in the foreground, so that ending it (its process group) ends its node."""
    command = [str(Path(sys.executable).with_name("ray")), "start", "--block", "--disable-usage-stats", *options]
    common = ["--num-cpus=1", "--node-ip-address=127.0.0.1", "--object-store-memory=100000000"]
    return subprocess.Popen(
        [*command, *common, f"--dashboard-agent-listen-port={free_port()}", f"--metrics-export-port={free_port()}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(node: subprocess.Popen[bytes]) -> None:
    """End a node: its ``ray start`` process stops what it started; what is left of its group is killed."""
    if node.poll() is None:
        node.terminate()
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)  # the node's own process group: nothing else


def nodes_alive(cluster_env: dict[str, str], address: str) -> int:
    """How many nodes the cluster's ``ray status`` lists as active."""
    status = subprocess.run(
        [str(Path(sys.executable).with_name("ray")), "status", f"--address={address}"],
        env=cluster_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    active = status.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
    return active.count("node_")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head and a second node on 127.0.0.1, one CPU each; stopped afterwards."""
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="rr"))  # short: Ray's socket paths live below it
    # a token of its own, not ~/.ray/auth_token, which any other Ray on this machine may create or replace
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    head = ray_start(
        "--head",
        f"--port={port}",
        "--include-dashboard=false",
        f"--temp-dir={folder / 'h'}",
        f"--ray-client-server-port={free_port()}",
        env=env,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
                time.sleep(0.2)
        worker = ray_start(f"--address=127.0.0.1:{port}", f"--temp-dir={folder / 'w'}", env=env)
        while nodes_alive(env, f"127.0.0.1:{port}") < 2:
            assert worker.poll() is None and time.monotonic() < deadline, "the second node did not join"
            time.sleep(1)
        yield Cluster(f"127.0.0.1:{port}", env, head, worker, folder / "w")
    finally:
        for node in (worker, head):
            if node is not None:
                stop(node)


def sweep_command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "rlrun", "-m", *args]


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def sweep_record(sweep_dir: Path) -> dict:
    return json.loads((sweep_dir / "sweep.json").read_text())


def on_ray(cluster: Cluster) -> list[str]:
    return ["hydra/launcher=ray", f"hydra.launcher.ray.init.address={cluster.address}", "progress_every=0"]


def test_a_sweep_joins_the_cluster_by_address_and_completes(tmp_path: Path, cluster: Cluster) -> None:
    args = [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=joined", *on_ray(cluster)]
    done = subprocess.run(
        sweep_command(args), cwd=tmp_path, env=cluster.env, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = sweep_record(tmp_path / "outputs" / "sweeps" / "joined")
    assert data["launcher"] == "ray" and data["counts"]["completed"] == 2, data


def worker_raylet(cluster: Cluster) -> psutil.Process:
    """The second node's raylet: the process of that node's temp folder that is a raylet."""
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if "raylet/raylet" in line and str(cluster.worker_dir) in line:
            return process
    raise AssertionError("the second node's raylet is not running")


def test_the_second_node_lost_mid_sweep_leaves_true_records_and_the_same_command_completes_the_rest(
    tmp_path: Path, cluster: Cluster
) -> None:
    args = [*GRIDWORLD_2048_STEPS, "total_timesteps=32768", "seed=0,1", "sweep=lost", *on_ray(cluster)]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "lost"
    raylet = worker_raylet(cluster)
    process = subprocess.Popen(
        sweep_command(args), cwd=tmp_path, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        # both jobs train, one on each node (one CPU each); the second node's is the one below its raylet
        deadline, on_worker = time.monotonic() + HANG_GUARD_S, None
        while on_worker is None:
            assert process.poll() is None and time.monotonic() < deadline, "the jobs did not both start"
            records = {path.parent: json.loads(path.read_text()) for path in sweep_dir.glob("*/*/seed-*/run.json")}
            training = {folder: run for folder, run in records.items() if run.get("timesteps")}
            below = {child.pid for child in raylet.children(recursive=True)}
            if len(training) == 2:
                on_worker = next((folder for folder, run in training.items() if run["pid"] in below), None)
                assert on_worker is not None, "no job ran on the second node"
            time.sleep(0.2)
        raylet.kill()  # the node is lost, its job's process with it
        output = process.communicate(timeout=HANG_GUARD_S)[0]
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, output
    statuses = {job["folder"].rsplit("/", 1)[1]: job["status"] for job in sweep_record(sweep_dir)["jobs"]}
    lost = on_worker.name
    (kept,) = set(statuses) - {lost}
    assert statuses == {lost: "interrupted", kept: "completed"}, output  # no job said completed that did not
    assert record(on_worker)["status"] != "completed"
    assert f"{on_worker.relative_to(sweep_dir)}: interrupted" in output

    again = subprocess.run(
        sweep_command(args), cwd=tmp_path, env=cluster.env, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert again.returncode == 0, again.stdout + again.stderr  # on the head, what is left of the cluster
    data = sweep_record(sweep_dir)
    assert data["counts"]["skipped"] == 1 and data["counts"]["completed"] == 1, data
    assert record(on_worker)["status"] == "completed" and len(record(on_worker)["resumes"]) == 1
