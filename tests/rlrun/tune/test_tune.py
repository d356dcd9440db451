"""``rlrun-tune``: tiny real studies (2 seeds, 512 steps, 1-3 trials) run as a user runs them, and bad input refused
before anything is trained (the search space's own checks are in test_space.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
from omegaconf import OmegaConf
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from rlrun.config.errors import UserError
from rlrun.tune.command import check_tune_keys
from tests import forked_commands
from tests.rlrun.helpers import compose_config
from tests.rlrun.sweep_helpers import (
    BAD_SPACE_ENTRIES,
    SEARCH_SPACES,
    SMALL_STUDY,
    TINY_STUDY_BUDGET,
    run_tune,
    tune_command,
)

ROOT = Path(__file__).resolve().parents[3]


def journal(folder: Path, name: str) -> optuna.Study:
    storage = JournalStorage(JournalFileBackend(str(folder / "journal.log")))
    return optuna.load_study(study_name=name, storage=storage)


def states(study: optuna.Study) -> list[TrialState]:
    return [trial.state for trial in study.get_trials()]


@pytest.fixture(scope="module")
def small_study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A study of 1 trial without validation, then the same command with tune.trials=2 and validation."""
    tmp_path = tmp_path_factory.mktemp("tune")
    first = run_tune(tmp_path, *SMALL_STUDY, "tune.trials=1", "tune.validate_seeds=0")
    folder = tmp_path / "outputs" / "tune" / "small"
    stamps = {path: path.stat().st_mtime_ns for path in sorted((folder / "trials").glob("*/seed-*/run.json"))}
    table_after_first = (folder / "table.md").exists()
    second = run_tune(tmp_path, *SMALL_STUDY, "tune.trials=2", "tune.validate_seeds=2")
    return {
        "first": first,
        "second": second,
        "folder": folder,
        "stamps": stamps,
        "tmp_path": tmp_path,
        "table_after_first": table_after_first,
    }


def test_a_small_study_writes_the_preset_the_validation_table_and_the_plots(small_study: dict[str, Any]) -> None:
    second, folder = small_study["second"], small_study["folder"]
    assert second.returncode == 0, second.stderr[-3000:]
    assert "2/2 finished (2 complete, 0 pruned, 0 failed); best" in second.stdout
    for name in ("best.yaml", "table.md", "table.csv", "table.json", "history.png", "importance.png"):
        assert (folder / name).is_file(), name
    best = journal(folder, "small").best_trial
    preset = OmegaConf.load(folder / "best.yaml")
    assert f"algo.learning_rate={preset.algo.learning_rate}" in best.user_attrs["overrides"]
    assert preset.algo.n_steps == 128 and preset.total_timesteps == 512  # the study's own overrides
    # a ready preset: as tuned/<name>.yaml in a folder of the search path, it composes the best trial's config
    tuned = small_study["tmp_path"] / "presets" / "tuned"
    tuned.mkdir(parents=True)
    (tuned / "small_best.yaml").write_text((folder / "best.yaml").read_text())
    trained = OmegaConf.load(folder / "trials" / str(best.number) / "seed-0" / "config.yaml")
    composed = compose_config(
        "env=gridworld", "algo=ppo", "tuned=small_best", f"hydra.searchpath=[file://{tuned.parent}]"
    )
    for key in ("algo", "env", "eval"):
        assert OmegaConf.to_container(composed[key]) == OmegaConf.to_container(trained[key]), key
    assert composed.total_timesteps == trained.total_timesteps == 512
    # the command best.yaml gives trains the tuned values, not the shipped preset
    command = next(line for line in (folder / "best.yaml").read_text().splitlines() if line.startswith("# Train with"))
    argv = shlex.split(command.removeprefix("# Train with: "))
    assert argv[0] == "rlrun" and "tuned=best" in argv
    shown = forked_commands.run(["-m", "rlrun", *argv[1:], "--cfg", "job"], cwd=small_study["tmp_path"], timeout=120)
    assert shown.returncode == 0, shown.stderr
    job = OmegaConf.create(shown.stdout)
    assert OmegaConf.to_container(job.algo) == OmegaConf.to_container(trained.algo)
    table = json.loads((folder / "table.json").read_text())
    assert [row["seeds_completed"] for row in table["rows"]] == [2, 2]
    assert table["compare"] is not None
    validation = sorted(f"{p.parent.name}/{p.name}" for p in (folder / "validation").glob("*/seed-*"))
    tried = f"trial-{best.number}"
    assert validation == sorted(["start/seed-1000", "start/seed-1001", f"{tried}/seed-1000", f"{tried}/seed-1001"])
    printed = re.findall(r"validation \[(\d)/4\] (\S+): mean return -?\d", second.stdout)  # as each one ends
    assert sorted(count for count, _ in printed) == ["1", "2", "3", "4"] and sorted(f for _, f in printed) == validation


def test_running_the_command_again_adds_trials_without_retraining_finished_ones(small_study: dict[str, Any]) -> None:
    first, second, folder = small_study["first"], small_study["second"], small_study["folder"]
    assert first.returncode == 0, first.stderr[-3000:]
    assert "1/1 finished (1 complete" in first.stdout
    assert not small_study["table_after_first"]  # tune.validate_seeds=0: no validation runs, no table
    assert len(small_study["stamps"]) == 2  # trial 0, two seeds
    for path, stamp in small_study["stamps"].items():
        assert path.stat().st_mtime_ns == stamp, f"{path} was trained again"
    assert "trial 0 started" not in second.stdout and "trial 1 started" in second.stdout
    assert states(journal(folder, "small")) == [TrialState.COMPLETE] * 2


def test_the_report_on_demand_keeps_the_validation_runs_and_another_command_is_refused(
    small_study: dict[str, Any],
) -> None:
    tmp_path, folder = small_study["tmp_path"], small_study["folder"]
    again = run_tune(tmp_path, *SMALL_STUDY, "tune.trials=2", "tune.validate_seeds=2", "tune.report=true")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 runs (0 kept" not in again.stdout and "0 runs (4 kept from before)" in again.stdout
    assert "started" not in again.stdout  # no trial
    other = run_tune(tmp_path, *SMALL_STUDY, "algo.gamma=0.9", "tune.trials=3")
    assert other.returncode == 2, other.stderr[-3000:]
    assert "study small was started with overrides" in other.stderr and "tune.study=NAME" in other.stderr
    assert states(journal(folder, "small")) == [TrialState.COMPLETE] * 2


def test_a_trial_the_pruner_stops_is_recorded_pruned_and_its_seeds_end(tmp_path: Path) -> None:
    folder = tmp_path / "outputs" / "tune" / "prune"
    folder.mkdir(parents=True)
    storage = JournalStorage(JournalFileBackend(str(folder / "journal.log")))
    study = optuna.create_study(study_name="prune", storage=storage, direction="maximize")
    study.enqueue_trial({"env.max_episode_steps": 10})
    study.enqueue_trial({"env.max_episode_steps": 100})
    # One hyperband bracket (total_timesteps / eval.every < 3): its first rung, at step 4000, compares the trials;
    # the budget leaves the seeds' processes far from their end when the pruner stops them
    budget = [o for o in TINY_STUDY_BUDGET if not o.startswith(("total_timesteps=", "eval.every="))]
    budget += ["total_timesteps=10000", "eval.every=4000"]
    args = ["env=pointenv", "algo=ppo", *budget, "tune.study=prune", "tune.pruner=hyperband", "tune.seeds=2"]
    done = run_tune(tmp_path, *args, "tune.trials=2", "tune.validate_seeds=0", space="episodes")
    assert done.returncode == 0, done.stderr[-3000:]
    assert states(journal(folder, "prune")) == [TrialState.COMPLETE, TrialState.PRUNED]
    assert "trial 1 pruned at step 4000" in done.stdout
    records = [json.loads((folder / "trials" / "1" / f"seed-{k}" / "run.json").read_text()) for k in (0, 1)]
    assert all(not Path(f"/proc/{record['pid']}").exists() for record in records)  # no seed left running
    # the seed that reached step 4000 last was stopped (SIGTERM: snapshot, interrupted); the other may have ended
    assert "interrupted" in {record["status"] for record in records} <= {"interrupted", "completed"}
    assert min(record["timesteps"] for record in records) < 10000


def test_a_failing_trial_is_recorded_with_its_error_and_the_study_goes_on(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="crash", storage=url, direction="maximize")
    study.enqueue_trial({"algo.learning_rate": 1.0e30})
    study.enqueue_trial({"algo.learning_rate": 0.0003})
    args = ["env=gridworld", "algo=ppo", *TINY_STUDY_BUDGET, "tune.study=crash", f"tune.storage={url}", "tune.seeds=1"]
    every_trial_failed = run_tune(tmp_path, *args, "tune.trials=1", "tune.validate_seeds=0", space="crash")
    assert every_trial_failed.returncode == 1
    # a learning rate of 1e30 makes the policy's parameters, then its probabilities, NaN; torch's sampling refuses them
    nan = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
    assert f"no trial of study crash completed; the first error: seed 0: {nan}" in every_trial_failed.stderr
    went_on = run_tune(tmp_path, *args, "tune.trials=2", "tune.validate_seeds=0", space="crash")
    assert went_on.returncode == 0, went_on.stderr[-3000:]
    trials = optuna.load_study(study_name="crash", storage=url).get_trials()
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.COMPLETE]
    assert trials[0].user_attrs["error"].startswith(f"seed 0: {nan}")
    assert (tmp_path / "outputs" / "tune" / "crash" / "best.yaml").is_file()


def test_two_processes_share_one_study(tmp_path: Path) -> None:
    args = ["env=gridworld", "algo=ppo", *TINY_STUDY_BUDGET, "tune.study=shared", "tune.seeds=1", "tune.trials=2"]
    command = tune_command(tmp_path, *args, "tune.validate_seeds=0")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    processes = [forked_commands.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True) for _ in "ab"]
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    trials = journal(tmp_path / "outputs" / "tune" / "shared", "shared").get_trials()
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 2
    assert {t.user_attrs["pid"] for t in trials} == {p.pid for p in processes}  # one trial each
    assert sum("trial 0 started" in out for out in outputs) == 1


def test_a_trial_left_running_by_a_dead_process_is_tried_again(tmp_path: Path) -> None:
    args = ["env=gridworld", "algo=ppo", *TINY_STUDY_BUDGET, "tune.study=dead", "tune.seeds=1", "tune.trials=1"]
    command = tune_command(tmp_path, *args, "tune.validate_seeds=0")
    killed = forked_commands.Popen(command, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    folder = tmp_path / "outputs" / "tune" / "dead"
    seeds = [folder / "trials" / "0" / "seed-0" / "run.json"]
    deadline = time.monotonic() + 300
    while not all(path.is_file() for path in seeds) and time.monotonic() < deadline:
        time.sleep(0.2)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    pids = [json.loads(path.read_text())["pid"] for path in seeds]
    deadline = time.monotonic() + 60
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids), "a seed outlived its rlrun-tune"
    again = run_tune(tmp_path, *args, "tune.validate_seeds=0")
    assert again.returncode == 0, again.stderr[-3000:]
    trials = journal(folder, "dead").get_trials()
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.COMPLETE]
    assert "abandoned" in trials[0].user_attrs and trials[1].user_attrs["retry_of"] == 0
    assert trials[1].params == trials[0].params


@pytest.mark.parametrize("key, value", [("pruner", "asha"), ("sampler", "grid"), ("objective", "mean"), ("trials", 0)])
def test_bad_tune_keys_are_named(key: str, value: Any) -> None:
    settings = OmegaConf.merge(compose_config().tune, {key: value})
    with pytest.raises(UserError, match=f"tune.{key}={value}"):
        check_tune_keys(settings)


def test_bad_input_exits_2_before_anything_is_written(tmp_path: Path) -> None:
    SEARCH_SPACES["bad"] = BAD_SPACE_ENTRIES["unknown key"][0]
    done = run_tune(tmp_path, "env=gridworld", "algo=ppo", "tune.pruner=asha", space="bad")
    assert done.returncode == 2, done.stderr
    assert "rlrun-tune: error: tune.pruner=asha is not one of median" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_tune(tmp_path, "env=gridworld", "algo=ppo", space="bad")
    assert done.returncode == 2 and "algo.lerning_rate is not an argument of PPO" in done.stderr
    assert not (tmp_path / "outputs").exists()
