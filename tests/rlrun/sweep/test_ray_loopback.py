"""``hydra/launcher=ray`` without an address: the Ray the sweep starts for itself serves as little as Ray allows.

The test lists the sockets the sweep's processes (the driver and every process Ray started under it) listen
on while a job trains: either all of them are on the loopback interface, or (Ray 2.60 binds its GCS server,
raylet and workers to all interfaces whatever it is asked) the sweep said so once, and no dashboard or job
server listens at all. No traffic is sent anywhere.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
import psutil  # noqa: E402  Ray's own copy where none is installed (ray/thirdparty_files, on sys.path once imported)

from hydra_plugins.rlrun_ray_launcher.ray_launcher import LOCAL_WARNING, _init_settings  # noqa: E402
from tests import forked_commands  # noqa: E402
from tests.rlrun.sweep_helpers import GRIDWORLD_4096_STEPS, sweep_command  # noqa: E402

LOOPBACK = {"127.0.0.1", "::1"}


def listening(pid: int) -> dict[tuple[str, int], str]:
    """(address, port) -> the command line of the process listening there, for ``pid`` and all it started."""
    found: dict[tuple[str, int], str] = {}
    root = psutil.Process(pid)
    for process in [root, *root.children(recursive=True)]:
        try:
            sockets = process.net_connections(kind="inet")
            name = " ".join(process.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for connection in sockets:
            if connection.status == psutil.CONN_LISTEN:
                found[(connection.laddr.ip, connection.laddr.port)] = name
    return found


def test_a_local_ray_sweep_starts_no_dashboard_and_warns_of_what_listens_beyond_loopback(tmp_path: Path) -> None:
    args = [
        *GRIDWORLD_4096_STEPS,
        "seed=0",
        "sweep=local",
        "hydra/launcher=ray",
        "hydra.launcher.ray.init.num_cpus=1",
        "hydra.launcher.ray.init.object_store_memory=100000000",
    ]
    sweep = forked_commands.Popen(
        sweep_command(args), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        # once the job has written a snapshot, every server of the Ray is up (driver, raylet, the job's worker)
        deadline = time.monotonic() + 300
        while not list(tmp_path.glob("outputs/sweeps/local/*/*/seed-0/snapshots/step-*/manifest.json")):
            assert sweep.poll() is None and time.monotonic() < deadline, "the job never wrote a snapshot"
            time.sleep(0.05)
        sockets = listening(sweep.pid)
        output = sweep.communicate(timeout=300)[0]
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    assert sweep.returncode == 0, output
    assert sockets, "Ray's servers were not found"
    names = " ".join(sockets.values())
    assert "gcs_server" in names and "raylet" in names, sockets
    # no dashboard and so no job server: neither its web port nor anything of dashboard.py's listens
    assert 8265 not in {port for _, port in sockets}, sockets
    assert not [name for name in sockets.values() if "dashboard/dashboard.py" in name], sockets
    beyond = {address: name for address, name in sockets.items() if address[0] not in LOOPBACK}
    if beyond:  # Ray binds them to all interfaces: the sweep said so, once, with how to keep them private
        assert output.count(LOCAL_WARNING) == 1, output
    else:
        assert LOCAL_WARNING not in output


@pytest.mark.parametrize(
    ("given", "passed"),
    [
        pytest.param({}, {"address": "local", "include_dashboard": False, "_node_ip_address": "127.0.0.1"}, id="local"),
        pytest.param(
            {"include_dashboard": True, "num_cpus": 2},
            {"address": "local", "include_dashboard": True, "_node_ip_address": "127.0.0.1", "num_cpus": 2},
            id="local-dashboard-asked-for",
        ),
        pytest.param({"address": "127.0.0.1:6379"}, {"address": "127.0.0.1:6379"}, id="joining-unchanged"),
    ],
)
def test_ray_init_settings_keep_a_local_ray_private_and_pass_a_cluster_address_as_given(
    given: dict, passed: dict
) -> None:
    assert _init_settings(given) == passed
