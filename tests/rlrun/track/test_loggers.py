"""The ``logger`` config group: the default leaves runs as they were (TensorBoard, the same hash and folder names,
nothing of MLflow or W&B imported), and ``csv`` writes SB3's scalars with their steps, also across a resume."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.config.keys import config_hash
from rlrun.config.resolvers import sweep_subdir
from rlrun.run.training import resume, train
from tests.rlrun.helpers import TINY_RUN, compose_config
from tests.rlrun.resume_helpers import Crash, crash_at

REPO = Path(__file__).resolve().parents[3]
SMALL_ROLLOUTS = ["env.n_envs=2", "algo.batch_size=64", "eval.every=64", "snapshot.every=128"]

# Trains a tiny run with the default logger in this process, then names what it imported of MLflow and W&B
DEFAULT_RUN = """
import sys
from rlrun.run.training import train
from tests.rlrun.helpers import TINY_RUN, compose_config
cfg = compose_config(*TINY_RUN)
assert list(cfg.logger) == ["tensorboard"], cfg.logger
train(cfg, sys.argv[1])
print(sorted(m for m in sys.modules if m.split(".")[0] in ("mlflow", "wandb")))
"""


def test_the_default_logger_imports_nothing_of_mlflow_or_wandb_and_writes_tensorboard(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", DEFAULT_RUN, str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"
    assert any((tmp_path / "tb").glob("events.out.tfevents.*"))
    assert "tracking" not in (tmp_path / "run.json").read_text()  # no tracking block without a service


def test_loggers_change_neither_the_config_hash_nor_the_sweep_folders() -> None:
    plain = compose_config(*TINY_RUN)
    tracked = compose_config(*TINY_RUN, "logger=[tensorboard,mlflow,csv]", "logger.mlflow.experiment=other")
    assert list(tracked.logger) == ["tensorboard", "mlflow", "csv"]
    assert config_hash(tracked) == config_hash(plain)
    overrides = ["algo.n_steps=32", "logger=[tensorboard,mlflow]", "logger.mlflow.experiment=x"]
    assert sweep_subdir("gridworld", "ppo", overrides, 0) == sweep_subdir("gridworld", "ppo", overrides[:1], 0)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def test_csv_writes_each_dump_at_its_step_and_a_resume_rewinds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = compose_config(*TINY_RUN, *SMALL_ROLLOUTS, "logger=[tensorboard,csv]")
    crash_at(monkeypatch, 200)  # the newest snapshot is at 128; rows at 160 and 192 are written again on resume
    with pytest.raises(Crash):
        train(cfg, tmp_path)
    before = rows(tmp_path / "progress.csv")
    assert before and max(int(row["step"]) for row in before) > 128
    monkeypatch.undo()
    resume(tmp_path, progress_bar="false")
    after = rows(tmp_path / "progress.csv")
    assert list(after[0])[0] == "step"
    evaluations = [int(row["step"]) for row in after if row.get("eval/mean_reward")]
    assert evaluations == [64, 128, 192, 256]  # the earlier rows kept, those after the snapshot not twice
    kept = [{key: row[key] for key in before[0]} for row in after if int(row["step"]) <= 128]
    assert kept == [row for row in before if int(row["step"]) <= 128]  # as the first session wrote them
