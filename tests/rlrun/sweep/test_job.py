"""One job of a sweep (rlrun.sweep.job): it takes the sweep's decision with it and never raises."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig

from rlrun.run.training import train
from rlrun.sweep.job import run_job
from rlrun.sweep.plan import RESUME, TRAIN
from tests.rlrun.resume_helpers import Crash, crash_at

META = {"env": "gridworld", "algo": "ppo"}


def stopped_run(tiny_config: Callable[..., DictConfig], run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> DictConfig:
    cfg = tiny_config("env=gridworld", "algo=ppo")
    with monkeypatch.context() as patch:
        crash_at(patch, cfg.total_timesteps - 8)
        with pytest.raises(Crash):
            train(cfg, run_dir, META)
    return cfg


def test_a_job_told_to_resume_continues_its_folder(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = stopped_run(tiny_config, tmp_path / "job", monkeypatch)
    assert run_job(cfg, tmp_path / "job", tmp_path, META, RESUME) is not None
    record = json.loads((tmp_path / "job" / "run.json").read_text())
    assert record["status"] == "completed" and len(record["resumes"]) == 1


def test_a_job_told_to_train_trains_a_new_run(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_job(tiny_config("env=gridworld", "algo=ppo"), tmp_path / "job", tmp_path, META, TRAIN) is not None
    record = json.loads((tmp_path / "job" / "run.json").read_text())
    assert record["status"] == "completed" and "resumes" not in record


def test_a_requeued_job_continues_its_own_earlier_attempt(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = stopped_run(tiny_config, tmp_path / "job", monkeypatch)
    # TRAIN: what the sweep decided before the first attempt started
    assert run_job(cfg, tmp_path / "job", tmp_path, META, TRAIN) is not None
    assert json.loads((tmp_path / "job" / "run.json").read_text())["status"] == "completed"


def test_a_job_requeued_by_slurm_says_so_in_its_resumes(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = stopped_run(tiny_config, tmp_path / "job", monkeypatch)
    for name, value in {"SLURM_JOB_ID": "13", "SLURM_ARRAY_JOB_ID": "12", "SLURM_ARRAY_TASK_ID": "0"}.items():
        monkeypatch.setenv(name, value)  # the requeued job's environment, as SLURM sets it
    command = "rlrun -m env=gridworld seed=0,1 hydra/launcher=slurm"  # the sweep's, which SweepTask passes on
    assert run_job(cfg, tmp_path / "job", tmp_path, {**META, "command": command}, TRAIN) is not None
    record = json.loads((tmp_path / "job" / "run.json").read_text())
    assert record["resumes"][-1]["command"] == f"{command}  # requeued by SLURM (job 12_0)"


def test_a_job_records_a_failure_and_returns(
    tiny_config: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = stopped_run(tiny_config, tmp_path / "job", monkeypatch)
    with monkeypatch.context() as patch:
        crash_at(patch, 0)  # the resumed run fails at once
        assert run_job(cfg, tmp_path / "job", tmp_path, META, RESUME) is None
    record = json.loads((tmp_path / "job" / "run.json").read_text())
    assert record["status"] == "failed" and "Crash" in record["error"]
