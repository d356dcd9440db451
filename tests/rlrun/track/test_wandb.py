"""``logger=[tensorboard,wandb]`` (rlrun/track/wandb.py): real runs in W&B's offline mode, read back with W&B's own
reader (``wandb leet inspect --json``, W&B 0.31), compared with the run's own record.

Every subprocess runs without an API key (none in the environment, ``NETRC`` and W&B's config folder empty)
and with a ``sitecustomize`` that refuses, and writes down, any network connection the Python process opens
beyond the loopback: a test fails if one was attempted.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlrun.config.errors import UserError
from rlrun.track.base import RunInfo
from rlrun.track.loggers import make_trackers
from rlrun.track.wandb import WandbTracker, resolved_mode, run_folders, upload
from tests import forked_commands
from tests.rlrun.helpers import compose_config
from tests.rlrun.sweep_helpers import TINY_STUDY_BUDGET, tune_command

REPO = Path(__file__).resolve().parents[3]
WANDB = [sys.executable, "-m", "wandb"]  # W&B's CLI as the product runs it: the interpreter's, wherever its scripts lie
TINY = [
    "env=cartpole",
    "algo=ppo",
    "logger=[tensorboard,wandb]",
    "env.n_envs=2",
    "algo.n_steps=32",  # a rollout (and SB3's dump) every 64 steps
    "algo.batch_size=64",
    "algo.n_epochs=1",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=2",
    "progress_bar=false",
]
# refuses (and records in $NETWORK_LOG) every connection of the Python process beyond the loopback
GUARD = """
import os, socket
LOCAL = {None, "localhost", "127.0.0.1", "::1", b"localhost", b"127.0.0.1"}
def _refuse(where):
    with open(os.environ["NETWORK_LOG"], "a") as log:
        log.write(repr(where) + "\\n")
    raise OSError("network access refused by the test")
_getaddrinfo = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    if host not in LOCAL:
        _refuse(host)
    return _getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
_connect = socket.socket.connect
def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL:
        _refuse(address)
    return _connect(self, address)
socket.socket.connect = connect

import atexit, sys
def _imported():  # which of wandb's modules the process imported, written as it ends
    if os.environ.get("IMPORTED_LOG"):
        with open(os.environ["IMPORTED_LOG"], "w") as log:
            log.write(" ".join(sorted(m for m in sys.modules if m.split(".")[0] == "wandb")))
atexit.register(_imported)
"""
# a run whose second periodic evaluation raises: training fails at step 256
FAILING = """
import sys
from rlrun.cli import main as cli
from rlrun.run.evaluation import PeriodicEvaluation
original = PeriodicEvaluation.run_evaluation
def run_evaluation(self):
    if self.num_timesteps >= 256:
        raise RuntimeError("evaluation broke")
    return original(self)
PeriodicEvaluation.run_evaluation = run_evaluation
sys.argv = ["rlrun", *sys.argv[1:]]
cli.main()
"""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The subprocesses' environment: no W&B credentials, W&B's folders and the network guard in ``tmp_path``."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    environ.update(
        PYTHONPATH=os.pathsep.join([str(guard), str(REPO)]),
        NETWORK_LOG=str(tmp_path / "network.log"),
        NETRC=str(tmp_path / "no-netrc"),
        WANDB_MODE="offline",
        WANDB_CONFIG_DIR=str(tmp_path / "wandb-config"),
        WANDB_CACHE_DIR=str(tmp_path / "wandb-cache"),
        WANDB_DATA_DIR=str(tmp_path / "wandb-data"),
    )
    yield environ
    log = tmp_path / "network.log"
    assert not log.exists(), f"network access attempted: {log.read_text()}"


def rlrun(cwd: Path, env: dict[str, str], *overrides: str, module: list[str] | None = None) -> Any:
    """``python -m rlrun`` (or ``module``'s command) with :data:`TINY` and ``overrides``, in ``cwd``."""
    args = [*(module or ["-m", "rlrun"]), *TINY, *overrides]
    return forked_commands.run(args, cwd=cwd, env=env, timeout=300)


def sessions(run_dir: Path, env: dict[str, str], prefix: str = "") -> list[list[dict[str, Any]]]:
    """The records of each W&B session of the run (one ``.wandb`` file each; their folders' names starting with
    ``prefix``), oldest first, as W&B reads them."""
    found = []
    for folder in (folder for folder in run_folders(run_dir) if folder.name.startswith(prefix)):
        (log,) = folder.glob("run-*.wandb")
        inspect = [*WANDB, "leet", "inspect", "--json", str(log)]
        # offline, or W&B's reader sends telemetry to W&B's cloud (it resolves the host even in a test)
        out = subprocess.run(inspect, env={**env, "WANDB_MODE": "offline"}, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        found.append([json.loads(line) for line in out.stdout.splitlines() if line.strip()])
    return found


def history(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each step's logged values (W&B's ``_step``: the env step)."""
    rows = [r["history"] for r in records if r["type"] == "history"]
    steps = [row["step"]["num"] for row in rows]
    assert len(steps) == len(set(steps)), f"a step logged twice: {steps}"
    return {row["step"]["num"]: row["item"] for row in rows}


def last_run(records: list[dict[str, Any]]) -> dict[str, Any]:
    return [r["run"] for r in records if r["type"] == "run"][-1]


def config(records: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for r in records:
        if r["type"] in ("run", "config"):
            merged.update((r["run"]["config"] if r["type"] == "run" else r["config"]).get("update", {}))
    return merged


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for r in records:
        if r["type"] == "summary":
            merged.update(r["summary"].get("update", {}))
    return merged


def exit_code(records: list[dict[str, Any]]) -> int | None:
    codes = [r["exit"].get("exit_code", 0) for r in records if r["type"] == "exit"]
    return codes[-1] if codes else None


def eval_rows(run_dir: Path) -> dict[int, float]:
    with open(run_dir / "eval.csv") as file:
        return {int(row["timesteps"]): float(row["mean_return"]) for row in csv.DictReader(file)}


def run_json(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run.json").read_text())


def test_completed_run_is_read_back_with_its_params_metrics_tags_and_files(tmp_path: Path, env: dict) -> None:
    """mode auto without an API key: offline, under the run folder; no WANDB_MODE, so auto decides alone."""
    del env["WANDB_MODE"]
    result = rlrun(tmp_path, env, "total_timesteps=512", "hydra.run.dir=run", "logger.wandb.tags=[baseline]")
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "run"
    record = run_json(run_dir)
    (records,) = sessions(run_dir, env)
    assert (run_dir / "wandb" / "latest-run").is_symlink()
    assert "wandb sync" in result.stdout + result.stderr and "Traceback" not in result.stderr

    run = last_run(records)
    assert record["tracking"]["wandb"]["run_id"] == run["run_id"]
    assert record["tracking"]["wandb"]["mode"] == "offline"
    assert run["project"] == "rlrun" and run["display_name"] == "cartpole-ppo-seed0"
    assert sorted(run["tags"]) == ["baseline", "status:completed"]
    params = config(records)
    assert params["algo.n_steps"] == 32 and params["env.n_envs"] == 2 and params["total_timesteps"] == 512
    assert params["env_id"] == record["env_id"] == "CartPole-v1" and params["algo"] == "ppo"
    assert params["seed"] == 0 and params["config_hash"] == record["config_hash"] and params["git"] == record["git"]
    assert params["versions.stable_baselines3"] == record["versions"]["stable_baselines3"]

    steps = history(records)
    evaluations = {step: row["eval/mean_reward"] for step, row in steps.items() if "eval/mean_reward" in row}
    assert evaluations == eval_rows(run_dir) and sorted(evaluations) == [128, 256, 384, 512]
    assert all("train/value_loss" in steps[step] for step in (128, 256, 384, 512))  # SB3's scalars at their step
    assert steps[512]["final/mean_return"] == record["final"]["mean_return"]
    assert summary(records)["status"] == "completed" and exit_code(records) == 0

    saved = {f["path"] for r in records if r["type"] == "files" for f in r["files"]["files"]}
    assert {"config.yaml", "run.json", "eval.csv"} <= saved
    (model,) = [r["artifact"] for r in records if r["type"] == "artifact"]
    assert model["type"] == "model" and [c["path"] for c in model["manifest"]["contents"]] == ["model.zip"]
    assert Path(model["manifest"]["contents"][0]["local_path"]) == (run_dir / "model.zip").resolve()


def test_failed_run_ends_failed(tmp_path: Path, env: dict) -> None:
    result = rlrun(tmp_path, env, "total_timesteps=512", "hydra.run.dir=run", module=["-c", FAILING])
    assert result.returncode == 1 and "evaluation broke" in result.stderr
    run_dir = tmp_path / "run"
    (records,) = sessions(run_dir, env)
    assert run_json(run_dir)["status"] == "failed"
    assert exit_code(records) == 1 and summary(records)["status"] == "failed"
    assert "status:failed" in last_run(records)["tags"]
    assert sorted(step for step, row in history(records).items() if "eval/mean_reward" in row) == [128]


def test_resume_continues_the_same_run_without_a_step_twice(tmp_path: Path, env: dict) -> None:
    """SIGTERM after the evaluation at 128 (the snapshot is written at the next rollout's end), then resume=."""
    stop = ["-m", "tests.rlrun.signal_run", "SIGTERM", "1", "128", "self"]
    result = rlrun(tmp_path, env, "total_timesteps=512", "hydra.run.dir=run", module=stop)
    assert result.returncode == 128 + signal.SIGTERM, result.stderr
    run_dir = tmp_path / "run"
    stopped = run_json(run_dir)
    assert stopped["status"] == "interrupted"
    snapshot_step = stopped["timesteps"]
    (run_dir / "videos").mkdir()
    (run_dir / "videos" / "episode.gif").write_bytes(b"GIF89a")  # as rlrun-eval --video would leave one

    args = ["-m", "rlrun", "resume=run", "progress_bar=false"]
    resumed = forked_commands.run(args, cwd=tmp_path, env=env, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    first, second = sessions(run_dir, env)
    assert last_run(first)["run_id"] == last_run(second)["run_id"] == run_json(run_dir)["tracking"]["wandb"]["run_id"]
    assert exit_code(first) == 255 and "status:interrupted" in last_run(first)["tags"]
    assert exit_code(second) == 0 and "status:completed" in last_run(second)["tags"]
    assert "videos/episode.gif" in {f["path"] for r in second if r["type"] == "files" for f in r["files"]["files"]}

    before, after = history(first), history(second)
    assert max(before) <= snapshot_step < min(after)  # W&B drops a step lower than one it holds: none is sent twice
    both = {**before, **after}
    assert {step: row["eval/mean_reward"] for step, row in both.items() if "eval/mean_reward" in row} == eval_rows(
        run_dir
    )


def test_a_resume_whose_record_lost_the_id_takes_the_newest_sessions(tmp_path: Path) -> None:
    """An earlier session killed before run.json recorded its W&B id: the id is the newest W&B folder's; a run
    started afresh in a folder with W&B sessions (a failed sweep job run again) is a new W&B run."""
    for name in ("offline-run-20261124_010000-old00001", "run-20261124_020000-new00002", "offline-run-bad"):
        (tmp_path / "wandb" / name).mkdir(parents=True)
    info = RunInfo(tmp_path, {}, "cartpole", "CartPole-v1", "ppo", 0, "hash", None, {}, None, resumed_from=128)
    assert WandbTracker()._earlier_id(info) == "new00002"
    info.resumed_from = None
    assert WandbTracker()._earlier_id(info) is None


def test_sweep_jobs_share_the_sweep_as_their_group(tmp_path: Path, env: dict) -> None:
    result = rlrun(tmp_path, env, "seed=0,1", "sweep=tiny", "total_timesteps=128", module=["-m", "rlrun", "-m"])
    assert result.returncode == 0, result.stderr
    jobs = sorted((tmp_path / "outputs" / "sweeps" / "tiny").glob("*/*/seed-*"))
    assert [job.name for job in jobs] == ["seed-0", "seed-1"]
    runs = [last_run(records) for job in jobs for records in sessions(job, env)]
    assert [run["run_group"] for run in runs] == ["tiny", "tiny"]
    assert all("sweep:tiny" in run["tags"] for run in runs) and runs[0]["run_id"] != runs[1]["run_id"]


def test_a_study_is_a_group_with_a_run_per_trial_and_its_seeds(tmp_path: Path, env: dict) -> None:
    study = [
        "env=gridworld",
        "algo=ppo",
        *TINY_STUDY_BUDGET,
        "tune.study=small",
        "tune.trials=1",
        "tune.validate_seeds=0",
    ]
    command = tune_command(tmp_path, *study, "tune.seeds=1", "logger=[tensorboard,wandb]")
    result = forked_commands.run(command, cwd=tmp_path, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    trial_dir = tmp_path / "outputs" / "tune" / "small" / "trials" / "0"
    (trial,) = sessions(trial_dir, env)
    seeds = [last_run(records) for records in sessions(trial_dir / "seed-0", env)]
    assert last_run(trial)["run_group"] == "small" and last_run(trial)["job_type"] == "trial"
    assert {"seeds:0", "state:COMPLETE", "status:completed"} <= set(last_run(trial)["tags"])
    assert "objective" in summary(trial) and "algo.learning_rate" in config(trial) and exit_code(trial) == 0
    assert [(run["run_group"], run["job_type"]) for run in seeds] == [("small", "small-trial-0")]


def test_an_unreachable_server_costs_the_run_nothing(tmp_path: Path, env: dict) -> None:
    """mode online with a key, the server a closed port on the loopback: one warning, the run logs offline."""
    env.update(WANDB_API_KEY="k" * 40, WANDB_BASE_URL="http://127.0.0.1:9")
    del env["WANDB_MODE"]
    overrides = ["logger.wandb.mode=online", "logger.wandb.timeout_s=1", "total_timesteps=256", "hydra.run.dir=run"]
    result = rlrun(tmp_path, env, *overrides)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert output.count("wandb could not start online") == 1 and "wandb sync run/wandb/offline-run-*" in output
    run_dir = tmp_path / "run"
    record = run_json(run_dir)
    assert record["status"] == "completed" and record["tracking"]["wandb"]["mode"] == "offline"
    assert record["tracking"]["unsent"] > 0
    (records,) = sessions(run_dir, env, prefix="offline-run-")
    assert last_run(records)["run_id"] == record["tracking"]["wandb"]["run_id"]
    assert {s for s, row in history(records).items() if "eval/mean_reward" in row} == set(eval_rows(run_dir))

    # rlrun-track sync runs wandb sync, here against the same dead server (stopped after its timeout)
    args = ["-m", "rlrun.cli.track", "sync", "run", "--timeout", "3"]
    synced = forked_commands.run(args, cwd=tmp_path, env=env, timeout=120)
    # wandb sync named the session it syncs, or (a loaded machine) was stopped before it could
    assert synced.returncode == 1 and ("offline-run-" in synced.stderr or "was stopped" in synced.stderr), synced
    assert "run: W&B: not uploaded" in synced.stdout
    assert "MLflow" not in synced.stdout and not (tmp_path / "mlflow.db").exists()  # a W&B run goes to W&B only
    assert upload(tmp_path) == 0  # a folder without W&B runs: nothing to upload


def test_a_bad_setting_is_refused_before_training_without_importing_wandb(tmp_path: Path, env: dict) -> None:
    env["IMPORTED_LOG"] = str(tmp_path / "imported.txt")
    result = rlrun(tmp_path, env, "hydra.run.dir=run", "logger.wandb.mode=sometimes")
    assert result.returncode == 2 and "logger.wandb.mode" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run" / "wandb").exists()
    assert (tmp_path / "imported.txt").read_text() == ""  # checked, the whole runner imported: nothing of wandb


def test_the_config_file_builds_the_tracker_with_the_class_defaults() -> None:
    """conf/logger/wandb.yaml and the class agree: its keys are the constructor's, with the same defaults."""
    trackers = make_trackers(compose_config("logger=[tensorboard,wandb]").logger)
    assert [tracker.name for tracker in trackers] == ["tensorboard", "wandb"]
    trackers[1].check()
    assert vars(trackers[1]) == vars(WandbTracker())


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ({"mode": "sometimes"}, "logger.wandb.mode"),
        ({"project": "a/b"}, "logger.wandb.project"),
        ({"run_name": "{env}-{colour}"}, "logger.wandb.run_name"),
        ({"tags": ["x" * 65]}, "logger.wandb.tags"),
        ({"timeout_s": 0}, "logger.wandb.timeout_s"),
    ],
    ids=["mode", "project", "run-name", "tag", "timeout"],
)
def test_check_names_the_bad_setting(setting: dict, problem: str) -> None:
    with pytest.raises(UserError, match=problem):
        WandbTracker(**setting).check()


def test_a_single_tag_is_one_tag() -> None:
    tracker = WandbTracker(tags="baseline", artifacts="model.zip")  # logger.wandb.tags=baseline on the command line
    assert tracker._tags() == ["baseline"] and tracker.artifacts == ["model.zip"]


@pytest.mark.parametrize(
    ("mode", "environ", "netrc", "expected"),
    [
        ("auto", {}, None, "offline"),
        ("auto", {"WANDB_API_KEY": "k" * 40}, None, "online"),
        ("auto", {}, "machine api.wandb.ai login user password " + "k" * 40, "online"),
        ("auto", {"WANDB_BASE_URL": "https://wandb.lab.org"}, "machine api.wandb.ai login user password k", "offline"),
        ("auto", {"WANDB_BASE_URL": "https://wandb.lab.org"}, "machine wandb.lab.org login user password k", "online"),
        ("auto", {"WANDB_API_KEY": "k" * 40, "WANDB_MODE": "offline"}, None, "offline"),
        ("auto", {"WANDB_MODE": "disabled"}, None, "disabled"),
        ("offline", {"WANDB_API_KEY": "k" * 40}, None, "offline"),
        ("online", {}, None, "online"),
    ],
    ids=["no-key", "env-key", "netrc", "netrc-other-host", "netrc-lab-host", "wandb-mode", "disabled", "offline", "on"],
)
def test_auto_mode_is_online_only_with_an_api_key(
    tmp_path: Path, mode: str, environ: dict, netrc: str | None, expected: str
) -> None:
    path = tmp_path / "netrc"
    if netrc is not None:
        path.write_text(netrc + "\n")
        path.chmod(0o600)
    assert resolved_mode(mode, {**environ, "NETRC": str(path)}) == expected
