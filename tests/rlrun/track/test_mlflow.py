"""``logger=[..., mlflow]`` against real MLflow: a tracking server started here on 127.0.0.1 (SQLite backend in a
temporary folder) and MLflow's local SQLite store; real runs, real signals, a server killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlrun.record import signatures
from rlrun.record.fields import parse_eval_csv
from rlrun.run.training import resume, train
from tests import forked_commands
from tests.rlrun.helpers import TINY_RUN, compose_config, free_port
from tests.rlrun.resume_helpers import Crash, crash_at
from tests.rlrun.sweep_helpers import SMALL_STUDY, run_tune

mlflow = pytest.importorskip("mlflow")

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
MLFLOW = ["logger=[tensorboard,mlflow]"]
SMALL_ROLLOUTS = [
    "env.n_envs=2",
    "algo.batch_size=64",
    "eval.every=64",
    "snapshot.every=128",
]  # rollouts of 64 steps: 4 in a run


class Server:
    """``mlflow server`` on 127.0.0.1 with a SQLite backend in ``folder``; stopped and started again at will."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, tries: int = 3) -> None:
        """Start the server; a port another process took meanwhile (a Ray cluster's metrics exporter, which
        answers any path, on the worker beside) is left for a new one."""
        args = [str(BIN / "mlflow"), "server", "--backend-store-uri", f"sqlite:///{self.folder / 'server.db'}"]
        args += ["--default-artifact-root", str(self.folder / "artifacts"), "--host", "127.0.0.1"]
        args += ["--port", str(self.port), "--workers", "1"]
        log = (self.folder / "server.log").open("ab")
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no job runner: seconds less to start
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if answer.status == 200 and answer.read().strip() == b"OK" and self.process.poll() is None:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        if tries > 1:
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            return self.start(tries - 1)
        raise RuntimeError(f"mlflow server did not start: {(self.folder / 'server.log').read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # the server and its workers, as a crash would
            self.process.wait()
        self.process = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("mlflow-server"))
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A local SQLite store shared by the module's in-process runs (created once: creating one costs seconds)."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow-local') / 'mlflow.db'}"


def client(uri: str) -> mlflow.MlflowClient:
    return mlflow.MlflowClient(tracking_uri=uri)


def tracking(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["tracking"]


def steps(uri: str, run_id: str, key: str) -> list[int]:
    return [metric.step for metric in client(uri).get_metric_history(run_id, key)]


def eval_steps(run_dir: Path) -> list[int]:
    return [row.timesteps for row in parse_eval_csv((run_dir / "eval.csv").read_text())]


def rlrun(run_dir: Path, *overrides: str, module: str = "rlrun") -> subprocess.CompletedProcess[str]:
    args = ["-m", *module.split(), *TINY_RUN, *overrides, f"hydra.run.dir={run_dir}"]
    return forked_commands.run(args, cwd=REPO, timeout=240, start_new_session=True)


def test_a_run_logs_params_metrics_artifacts_and_status_to_a_server(server: Server, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = rlrun(run_dir, "logger=[mlflow]", f"logger.mlflow.tracking_uri={server.url}", "+logger.mlflow.tags.lab=x")
    assert result.returncode == 0, result.stderr
    record = json.loads((run_dir / "run.json").read_text())
    run_id = record["tracking"]["mlflow"]["run_id"]
    assert record["tracking"]["unsent"] == 0 and not (run_dir / "tracking-unsent.jsonl").exists()
    assert not (run_dir / "tb").exists()  # logger=[mlflow] alone: no TensorBoard files
    run = client(server.url).get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.tags["status"] == "completed" and run.data.tags["lab"] == "x"
    params = run.data.params
    assert params["algo.n_steps"] == "32" and params["seed"] == "0" and params["config_hash"] == record["config_hash"]
    assert (
        params["env_id"] == record["env_id"]
        and params["versions.stable_baselines3"] == record["versions"]["stable_baselines3"]
    )
    assert steps(server.url, run_id, "eval/mean_reward") == eval_steps(run_dir) == [128, 256]
    assert steps(server.url, run_id, "final/mean_return") == [256]
    assert run.data.metrics["final/mean_return"] == pytest.approx(record["final"]["mean_return"])
    rollout = steps(server.url, run_id, "time/fps")
    assert rollout and rollout == sorted(set(rollout)) and all(step % 32 == 0 for step in rollout)
    artifacts = {item.path for item in client(server.url).list_artifacts(run_id)}
    assert {"config.yaml", "run.json", "eval.csv", "model.zip"} <= artifacts


def test_a_failed_run_is_failed_and_its_resume_continues_the_same_run_without_duplicates(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = compose_config(*TINY_RUN, *MLFLOW, f"logger.mlflow.tracking_uri={store}", *SMALL_ROLLOUTS)
    crash_at(monkeypatch, 200)  # after the snapshot at 128 and the evaluations at 128 and 192
    with pytest.raises(Crash):
        train(cfg, tmp_path)
    run_id = tracking(tmp_path)["mlflow"]["run_id"]
    assert client(store).get_run(run_id).info.status == "FAILED"
    assert steps(store, run_id, "eval/mean_reward") == [64, 128, 192]
    monkeypatch.undo()
    resume(tmp_path, progress_bar="false")
    assert tracking(tmp_path)["mlflow"]["run_id"] == run_id  # the same MLflow run
    run = client(store).get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.tags["status"] == "completed"
    for key in run.data.metrics:  # the rows at 160 and 192 were logged before the crash, and not again
        logged = steps(store, run_id, key)
        assert len(logged) == len(set(logged)), key
    assert steps(store, run_id, "eval/mean_reward") == eval_steps(tmp_path) == [64, 128, 192, 256]


def test_sigterm_marks_the_run_killed_and_resume_finishes_it(server: Server, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    uri = f"logger.mlflow.tracking_uri={server.url}"
    stopped = rlrun(run_dir, *MLFLOW, uri, *SMALL_ROLLOUTS, module="tests.rlrun.signal_run SIGTERM 1 64 self")
    assert stopped.returncode == 143, stopped.stderr
    run_id = tracking(run_dir)["mlflow"]["run_id"]
    run = client(server.url).get_run(run_id)
    assert run.info.status == "KILLED" and run.data.tags["status"] == "interrupted"
    resumed = forked_commands.run(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], cwd=REPO, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert tracking(run_dir)["mlflow"]["run_id"] == run_id
    assert client(server.url).get_run(run_id).info.status == "FINISHED"
    assert steps(server.url, run_id, "eval/mean_reward") == eval_steps(run_dir) == [64, 128, 192, 256]


def test_a_joblib_sweep_is_one_parent_run_with_a_child_per_job(tmp_path: Path) -> None:
    args = ["-m", "rlrun", "-m", *TINY_RUN, *MLFLOW, "seed=0,1", "sweep=tracked"]
    args += ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    result = forked_commands.run(args, cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    sweep_dir = tmp_path / "outputs" / "sweeps" / "tracked"
    store = f"sqlite:///{tmp_path / 'outputs' / 'mlflow.db'}"  # the default: the store of the outputs folder
    parent_id = json.loads((sweep_dir / "tracking.json").read_text())["mlflow"]["run_id"]
    runs = client(store).search_runs([client(store).get_experiment_by_name("rlrun").experiment_id])
    children = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent_id]
    assert len(runs) == 3 and len(children) == 2
    assert {run.data.params["seed"] for run in children} == {"0", "1"}
    assert all(run.info.status == "FINISHED" and run.data.tags["sweep"] == "tracked" for run in children)
    parent = client(store).get_run(parent_id)
    assert parent.info.status == "FINISHED"
    assert {"sweep.json", "table.md", "curves.png"} <= {item.path for item in client(store).list_artifacts(parent_id)}
    assert not (tmp_path / "mlruns").exists()  # the artifacts are under outputs/ too


def test_a_server_killed_mid_run_costs_nothing_and_sync_fills_the_gap(server: Server, tmp_path: Path) -> None:
    down = server  # stopped mid-run and started again (the module's last test that uses it)
    run_dir = tmp_path / "run"
    overrides = [*MLFLOW, f"logger.mlflow.tracking_uri={down.url}", "total_timesteps=16384", "eval.every=2048"]
    overrides.append("logger.mlflow.flush_s=0.5")  # metrics reach the server early: it is stopped once they do
    args = ["-m", "rlrun", *TINY_RUN, *overrides, f"hydra.run.dir={run_dir}"]
    process = forked_commands.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not steps_so_far(down, run_dir):
            time.sleep(0.2)
        assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
        down.stop()  # mid-run: the run has logged rows, and more are coming
        output, _ = process.communicate(timeout=240)  # the log: Hydra's console handler
    finally:
        process.kill()
    assert process.returncode == 0, output
    assert output.count(f"MLflow at {down.url} failed") == 1  # warned once
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "completed" and record["tracking"]["unsent"] > 0
    told = [line for line in output.splitlines() if "rlrun-track sync" in line]
    assert len(told) == 1 and told[0].endswith(f"{run_dir.name}"), output  # the command, with the run folder
    assert f"--tracking-uri {down.url}" in told[0]  # sync sends where its command line says, never the folder
    down.start()  # the service is back: sync sends what the run kept
    synced = subprocess.run(
        [str(BIN / "rlrun-track"), "sync", "--tracking-uri", down.url, str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert synced.returncode == 0, synced.stderr
    assert tracking(run_dir)["unsent"] == 0 and not (run_dir / "tracking-unsent.jsonl").exists()
    run_id = record["tracking"]["mlflow"]["run_id"]
    assert client(down.url).get_run(run_id).info.status == "FINISHED"
    assert steps(down.url, run_id, "eval/mean_reward") == eval_steps(run_dir)
    assert steps(down.url, run_id, "final/mean_return") == [16384]


def steps_so_far(server: Server, run_dir: Path) -> bool:
    """Whether the run's MLflow run holds a rollout's metrics yet."""
    try:
        run_id = tracking(run_dir)["mlflow"]["run_id"]
        return bool(run_id) and bool(steps(server.url, run_id, "time/fps"))
    except (OSError, KeyError, ValueError):
        return False


def test_a_bad_tracking_uri_exits_2_before_training(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = rlrun(run_dir, *MLFLOW, "logger.mlflow.tracking_uri=localhost:5000")
    assert result.returncode == 2
    assert "logger.mlflow.tracking_uri=localhost:5000" in result.stderr and "http://host:5000" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (run_dir / "run.json").exists()


def test_sync_imports_a_run_trained_without_a_logger_once(store: str, tmp_path: Path) -> None:
    from rlrun.track.sync import sync_run

    train(compose_config(*TINY_RUN), tmp_path)  # the default logger: TensorBoard only
    assert "tracking" not in json.loads((tmp_path / "run.json").read_text())
    run_id, unsent = sync_run(tmp_path, tracking_uri=store)
    assert unsent == 0 and tracking(tmp_path)["mlflow"]["run_id"] == run_id
    again, _ = sync_run(tmp_path, tracking_uri=store)
    assert again == run_id
    (tmp_path / "run.json").write_text(
        json.dumps({**json.loads((tmp_path / "run.json").read_text()), "tracking": None})
    )
    signatures.trust_folder(tmp_path)  # a run.json edited by hand is trusted again once reviewed
    found, _ = sync_run(tmp_path, tracking_uri=store)  # run.json forgot it: the run_dir tag finds it again
    assert found == run_id
    run = client(store).get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.params["algo.n_steps"] == "32"
    assert steps(store, run_id, "eval/mean_reward") == eval_steps(tmp_path)  # from tb/, once
    assert {"config.yaml", "run.json", "model.zip"} <= {item.path for item in client(store).list_artifacts(run_id)}


def test_a_study_is_a_run_with_a_run_per_trial_and_the_seeds_under_it(tmp_path: Path) -> None:
    result = run_tune(tmp_path, *SMALL_STUDY, *MLFLOW, "tune.trials=1", "tune.validate_seeds=0")
    assert result.returncode == 0, result.stderr
    store = f"sqlite:///{tmp_path / 'outputs' / 'mlflow.db'}"
    runs = client(store).search_runs([client(store).get_experiment_by_name("rlrun").experiment_id])
    by_kind = {kind: [run for run in runs if kind in run.data.tags] for kind in ("study", "trial")}
    (study,), (trial,) = by_kind["study"], by_kind["trial"]
    assert trial.data.tags["mlflow.parentRunId"] == study.info.run_id
    assert trial.data.tags["seeds"] == "0,1" and trial.data.tags["state"] == "COMPLETE"
    assert "algo.learning_rate" in trial.data.params and "objective" in trial.data.metrics
    seeds = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == trial.info.run_id]
    assert sorted(run.data.params["seed"] for run in seeds) == ["0", "1"]
    assert all(run.info.status == "FINISHED" for run in [study, trial, *seeds])
