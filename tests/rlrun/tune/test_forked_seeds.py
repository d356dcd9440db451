"""A study's seeds forked from the preloaded process (rlrun/tune/forked_seeds.py) train as fresh ``python -m rlrun``
processes do: the same run folder, apart from wall times, pids and clock times."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from rlrun.startup import bootstrap
from rlrun.tune.seed_runs import OUTPUT_LOG, SeedRun, stop_runs
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS, TINY_STUDY_BUDGET, tune_command

ROOT = Path(__file__).resolve().parents[3]

# Imported through env.packages by each process that makes the study's env (rlrun-tune's checks, each seed):
# what that process finds there, in probes/<pid>.json beside this module, and probes/<pid>.exit from its exit
# handler, as the process ends.
PROBE = """\
import atexit, json, os, sys
from pathlib import Path

probes = Path(__file__).parent / "probes"
probes.mkdir(exist_ok=True)
found = {"parent": os.getppid(), "dynamo": "torch._dynamo" in sys.modules, "argv0": sys.argv[0], "path0": sys.path[0]}
(probes / f"{os.getpid()}.json").write_text(json.dumps(found))
atexit.register((probes / f"{os.getpid()}.exit").write_text, "ended")
"""
# run.json's fields that tell when and where a run trained, not what it trained
CLOCKS = ("wall_s", "fps", "eval_s", "pid", "started", "updated")


def _study(cwd: Path, conf: Path, switch: str) -> subprocess.CompletedProcess[str]:
    """One trial of 2 seeds, its values enqueued, started in ``cwd`` with RLRUN_FAST_START=switch."""
    folder = cwd / "outputs" / "tune" / "same"
    folder.mkdir(parents=True)
    (cwd / "seed_probe.py").write_text(PROBE)
    study = optuna.create_study(
        study_name="same", storage=JournalStorage(JournalFileBackend(str(folder / "journal.log"))), direction="maximize"
    )
    study.enqueue_trial({"algo.learning_rate": 0.003, "algo.policy_kwargs.net_arch": "[16]"})
    args = ["env=gridworld", "algo=ppo", *TINY_STUDY_BUDGET, "tune.seeds=2", "tune.study=same", "tune.trials=1"]
    command = tune_command(conf, *args, "tune.validate_seeds=0", "env.packages=[seed_probe]")
    env = {**os.environ, "PYTHONPATH": str(ROOT), bootstrap.SWITCH: switch}
    return subprocess.run([sys.executable, *command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _seed_folder(cwd: Path, seed: int) -> Path:
    return cwd / "outputs" / "tune" / "same" / "trials" / "0" / f"seed-{seed}"


def _what_it_trained(folder: Path) -> dict[str, Any]:
    """A seed's run folder without its clocks: run.json, eval.csv without wall_s, the configs, the policy's
    parameters, and the files there (TensorBoard's named by time, host and pid)."""
    record = {k: v for k, v in json.loads((folder / "run.json").read_text()).items() if k not in CLOCKS}
    rows = [
        {k: v for k, v in row.items() if k != "wall_s"}
        for row in csv.DictReader(io.StringIO((folder / "eval.csv").read_text()))
    ]
    files = sorted(p.relative_to(folder).as_posix().split("tfevents.")[0] for p in folder.rglob("*") if p.is_file())
    with zipfile.ZipFile(folder / "model.zip") as model:
        policy = model.read("policy.pth")
    configs = {
        name: (folder / name).read_text() for name in ("config.yaml", ".hydra/config.yaml", ".hydra/overrides.yaml")
    }
    return {"run.json": record, "eval.csv": rows, "files": files, "policy": policy, **configs}


def test_seeds_forked_from_the_preloaded_process_train_as_fresh_processes_do(tmp_path: Path) -> None:
    trained, probes, parents = {}, {}, {}
    for mode, switch in (("fresh", "0"), ("forked", "1")):
        cwd = tmp_path / mode
        cwd.mkdir()
        done = _study(cwd, tmp_path, switch)
        assert done.returncode == 0, done.stderr[-3000:]
        trained[mode] = [_what_it_trained(_seed_folder(cwd, seed)) for seed in (0, 1)]
        pids = [json.loads((_seed_folder(cwd, seed) / "run.json").read_text())["pid"] for seed in (0, 1)]
        probes[mode] = [json.loads((cwd / "probes" / f"{pid}.json").read_text()) for pid in pids]
        assert [(cwd / "probes" / f"{pid}.exit").is_file() for pid in pids] == [True, True]  # its exit handlers ran
        storage = JournalStorage(JournalFileBackend(str(cwd / "outputs" / "tune" / "same" / "journal.log")))
        [trial] = optuna.load_study(study_name="same", storage=storage).get_trials()
        parents[mode] = {probe["parent"] == trial.user_attrs["pid"] for probe in probes[mode]}
    assert trained["forked"] == trained["fresh"]
    assert [record["run.json"]["status"] for record in trained["fresh"]] == ["completed"] * 2
    # forked: torch._dynamo already there, the parent a fork server; fresh: neither. Both see python -m rlrun's
    # argv[0] and sys.path[0] (the working folder, where seed_probe.py is).
    assert [probe["dynamo"] for probe in probes["forked"] + probes["fresh"]] == [True, True, False, False]
    assert parents == {"forked": {False}, "fresh": {True}}  # rlrun-tune started a fresh seed itself
    for mode in ("fresh", "forked"):
        assert all(probe["argv0"].endswith(os.path.join("rlrun", "__main__.py")) for probe in probes[mode])
        assert all(probe["path0"] == str(tmp_path / mode) for probe in probes[mode])


def _training(folder: Path) -> bool:
    """Whether the run has taken training steps: its stop signals are handled from then on (a signal in the
    moments between run.json's first write and the start of training ends the process as the signal's default)."""
    try:
        return json.loads((folder / "run.json").read_text()).get("timesteps", 0) > 0
    except (OSError, ValueError):
        return False


def test_a_forked_seed_answers_a_mistake_and_is_stopped_as_a_fresh_one_is(tmp_path: Path) -> None:
    mistaken = [
        SeedRun(tmp_path / mode, 0, ["env=cartpol"], preloaded=mode == "forked") for mode in ("fresh", "forked")
    ]
    for run in mistaken:
        run.start()
    assert [run.process.wait(300) for run in mistaken if run.process is not None] == [2, 2]  # SystemExit's status
    logs = [(run.folder / OUTPUT_LOG).read_text() for run in mistaken]
    assert logs[0] == logs[1] and "env=cartpol" in logs[0] and "Traceback" not in logs[0]
    stopped = SeedRun(tmp_path / "stopped", 0, [*GRIDWORLD_2048_STEPS, "total_timesteps=1000000"], preloaded=True)
    stopped.start()
    while stopped.poll() is None and not _training(stopped.folder):  # bounded by the run's budget
        time.sleep(0.2)
    stop_runs([stopped])  # SIGTERM: the run snapshots at its next boundary and ends interrupted
    assert stopped.process is not None and stopped.process.returncode == 143
    assert json.loads((stopped.folder / "run.json").read_text())["status"] == "interrupted"
    assert not (stopped.folder / ".lock").exists()
    killed = SeedRun(tmp_path / "killed", 0, [*GRIDWORLD_2048_STEPS, "total_timesteps=1000000"], preloaded=True)
    killed.start()
    assert killed.process is not None
    killed.process.kill()
    assert killed.process.wait(60) == -9 and killed.poll() == -9  # as subprocess.Popen says it
