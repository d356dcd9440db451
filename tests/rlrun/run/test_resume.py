"""Crash-safe snapshots and exact resume: a killed run comes back as the same run."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.config.errors import UserError
from rlrun.record import signatures
from rlrun.run import snapshots
from rlrun.run.training import resume, train
from tests import forked_commands
from tests.rlrun.helpers import cli, eval_rows, status
from tests.rlrun.kill_during_snapshot import STEPS, config
from tests.rlrun.resume_helpers import (
    assert_bit_identical,
    interrupted,
    kill_child,
    resume_in_fresh_process,
)

NOISE = "algo.action_noise={_target_:stable_baselines3.common.noise.NormalActionNoise,mean:[0,0],sigma:[0.1,0.1]}"


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GridWorld PPO run stopped by a crash after its snapshots at 256 and 512 steps, trained once for the module."""
    run_dir = tmp_path_factory.mktemp("crashed") / "run"
    interrupted(run_dir)
    return run_dir


def copy_of(crashed: Path, run_dir: Path) -> Path:
    """``crashed`` copied to ``run_dir`` (as the crash left it); the copy's newest snapshot."""
    shutil.copytree(crashed, run_dir, dirs_exist_ok=True)
    return snapshots.list_snapshots(run_dir / "snapshots")[-1]


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "overrides",
    [
        ["env=gridworld", "algo=ppo", "env.n_envs=2", "env.vec_env=subproc"],
        ["env=pendulum", "algo=ppo", "env.n_envs=2", "env.normalize.obs=true", "env.normalize.reward=true"]
        + ["algo.use_sde=true", "algo.sde_sample_freq=4"],
        ["env=pointenv", "algo=sac", "algo.use_sde=true", NOISE],
        ["env=pointgoal", "algo=her"],
    ],
    ids=["ppo-subproc-2envs", "ppo-normalized-gsde-2envs", "sac-gsde-action-noise", "her"],
)
def test_killed_and_resumed_run_is_bit_identical(tmp_path: Path, overrides: list[str]) -> None:
    killed = kill_child(tmp_path / "killed", f"step-{int(STEPS * 0.6)}", *overrides)  # mid-rollout
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert status(tmp_path / "killed") == "running"  # as a killed process leaves it; its pid is gone
    resume_in_fresh_process(tmp_path / "killed")
    train(config(*overrides), tmp_path / "whole")

    assert status(tmp_path / "killed") == "completed"
    assert_bit_identical(tmp_path / "killed", tmp_path / "whole", config(*overrides))


def test_logs_after_resume_have_no_duplicate_steps(crashed: Path, tmp_path: Path) -> None:
    copy_of(crashed, tmp_path)
    resume(tmp_path, progress_bar="false")
    steps = [int(row[0]) for row in eval_rows(tmp_path)[1:]]
    assert steps == sorted(set(steps)) and steps[-1] == STEPS
    accumulator = EventAccumulator(str(tmp_path / "tb"), purge_orphaned_data=True)
    accumulator.Reload()
    events = [e.step for e in accumulator.Scalars("eval/mean_reward")]
    assert events == steps
    record = json.loads((tmp_path / "run.json").read_text())
    assert [r["from_step"] for r in record["resumes"]] == [512]


def test_damaged_newest_snapshot_falls_back_with_a_warning(crashed: Path, tmp_path: Path) -> None:
    copy_of(crashed, tmp_path)
    newest = snapshots.list_snapshots(tmp_path / "snapshots")[-1]
    with open(newest / "model.zip", "r+b") as f:
        f.truncate(100)
    with pytest.warns(UserWarning, match="damaged"):
        resume(tmp_path, progress_bar="false")
    assert json.loads((tmp_path / "run.json").read_text())["resumes"][0]["from_step"] == 256


def test_all_snapshots_damaged_is_a_clear_error_that_touches_nothing(
    crashed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_of(crashed, tmp_path)
    for snapshot in snapshots.list_snapshots(tmp_path / "snapshots"):
        (snapshot / snapshots.STATE).write_bytes(b"garbage")
    before = tree(tmp_path)
    with pytest.warns(UserWarning), pytest.raises(UserError, match="all 2 snapshots are damaged"):
        resume(tmp_path)
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("target", "message"),
    [("missing", "no such folder"), ("not_a_run", "not a run folder (no run.json)")],
)
def test_bad_resume_target_creates_nothing(tmp_path: Path, target: str, message: str) -> None:
    (tmp_path / "not_a_run").mkdir()
    result = cli(["-m", "rlrun", f"resume={target}"], tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not_a_run"]


def test_resume_refuses_overrides_that_change_training_and_allows_cosmetic_ones(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(config("env=gridworld", "algo=ppo"), run_dir)
    before = tree(run_dir)
    refused = cli(["-m", "rlrun", f"resume={run_dir}", "algo.learning_rate=0.1"], tmp_path)
    assert refused.returncode == 2 and "algo.learning_rate=0.1" in refused.stderr
    done = cli(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], tmp_path)
    assert done.returncode == 0 and "already completed" in done.stdout
    assert tree(run_dir) == before


def test_sigterm_writes_a_snapshot_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [
        "env=gridworld",
        "algo=ppo",
        "~tuned",
        "total_timesteps=1000000",
        "snapshot.every=100000",
        "algo.n_steps=64",
        f"hydra.run.dir={run_dir}",
    ]
    process = forked_commands.Popen(
        ["-m", "rlrun", *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not (run_dir / "eval.csv").exists() and time.monotonic() < deadline:  # training has started
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "python -m rlrun resume=run" in stderr  # the run folder, relative to where the command ran
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "interrupted" and 0 < record["timesteps"] < 1_000_000
    (snapshot,) = snapshots.list_snapshots(run_dir / "snapshots")
    assert snapshots.is_complete(snapshot) and snapshots.manifest(snapshot)["step"] == record["timesteps"]


def sha256_passes(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """How many times each file of a snapshot folder (``step-*``, not a snapshot being written) is hashed."""
    counts: Counter[Path] = Counter()
    original = snapshots._sha256

    def counting(path: Path) -> str:
        if Path(path).parent.name.startswith("step-"):
            counts[Path(path)] += 1
        return original(path)

    monkeypatch.setattr(snapshots, "_sha256", counting)
    return counts


def test_resume_verifies_its_snapshot_once_after_the_check_before_hydra(
    crashed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlrun.run.resume_state import load_target

    newest = copy_of(crashed, tmp_path)
    passes = sha256_passes(monkeypatch)
    target = load_target(tmp_path)  # what `rlrun resume=` checks before Hydra starts
    assert target[1] == newest
    resume(tmp_path, progress_bar="false", target=target)  # the run continues from what was read, not re-read
    assert {path.parent for path in passes} >= {newest}
    assert set(passes.values()) == {1}, passes


def test_resume_through_the_command_line_verifies_its_snapshot_once(
    crashed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlrun.cli import main as cli_main

    newest = copy_of(crashed, tmp_path)
    passes = sha256_passes(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["rlrun", f"resume={tmp_path}", "progress_bar=false"])
    cli_main.main()  # the entry returns (no quick exit)
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "completed"
    assert {path.parent for path in passes} >= {newest}
    assert set(passes.values()) == {1}, passes


def test_resume_leaves_the_config_it_loaded_unchanged(
    crashed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlrun.run import training

    copy_of(crashed, tmp_path)
    loaded: list[tuple[DictConfig, str]] = []
    original = training.load_config

    def remember(run_dir: Path) -> DictConfig:
        cfg = original(run_dir)
        loaded.append((cfg, OmegaConf.to_yaml(cfg)))
        return cfg

    monkeypatch.setattr(training, "load_config", remember)
    resume(tmp_path, progress_bar="auto")
    [(cfg, text)] = loaded
    assert OmegaConf.to_yaml(cfg) == text and cfg.progress_bar == "false"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[1, 2]", "run.json holds list [1, 2], not an object"),
        (b'{"status": "interrupted"}', "run.json has no 'env_id'"),
        (b'{"status": "paused"}', "run.json has no 'env_id'"),
        (b"\xff\xfe", "its run.json cannot be read"),
    ],
    ids=["a-list", "minimal", "unknown-status", "not-text"],
)
def test_a_damaged_run_json_is_refused_naming_the_field(tmp_path: Path, text: bytes, message: str) -> None:
    from rlrun.run.resume_state import load_target

    (tmp_path / "run.json").write_bytes(text)
    with pytest.raises(UserError, match=re.escape(message)) as refused:
        load_target(tmp_path)
    assert refused.value.status == 2 and "run.json" in str(refused.value.fix)


def assert_resume_refused_untouched(run_dir: Path, cwd: Path, message: str) -> None:
    """``resume=run_dir`` exits 2 with ``message`` and no traceback, and leaves the folder as it was (but the
    writer's lock, taken before the record is read)."""
    before = tree(run_dir)
    result = cli(["-m", "rlrun", f"resume={run_dir}"], cwd)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
    after = tree(run_dir)
    after.pop(".lock", None)
    before.pop(".lock", None)
    assert after == before


def test_a_run_json_or_config_yaml_of_the_wrong_shape_is_refused_before_training(crashed: Path, tmp_path: Path) -> None:
    from rlrun.run.resume_state import load_target

    run_dir = tmp_path / "run"
    copy_of(crashed, run_dir)
    record_text, config_text = (run_dir / "run.json").read_text(), (run_dir / "config.yaml").read_text()
    minimal = {k: v for k, v in json.loads(record_text).items() if k not in ("env", "algo", "pid", "host")}
    for damaged, message in (
        (minimal, "run.json has no 'env'"),  # trained to the end before, then KeyError: 'env'
        ({**minimal, "env": ["a", "b"], "algo": "ppo"}, "run.json's 'env' is ['a', 'b'], not a name"),
        ({**json.loads(record_text), "overrides": [1]}, "run.json's 'overrides' is [1], not a list of strings"),
    ):
        (run_dir / "run.json").write_text(json.dumps(damaged))
        signatures.sign_record(run_dir)  # signed as it is: refused for its shape, not for its signature
        assert_resume_refused_untouched(run_dir, tmp_path, message)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    (run_dir / "run.json").write_text(record_text)
    signatures.sign_record(run_dir)
    for text, message in (
        (
            config_text.replace("algo:\n", "algo: 5\nold_algo:\n", 1),
            "config.yaml: 'algo' has a value of the wrong type",
        ),
        (config_text + "seed: many\n", "config.yaml cannot be read"),  # a key twice: YAML refuses it
        (config_text.replace("  n_envs:", "  n_envs: many\n  old_n_envs:", 1), "'env.n_envs' has a value of the wrong"),
        ("- a list\n", "config.yaml holds a list, not a mapping"),
    ):
        (run_dir / "config.yaml").write_text(text)
        with pytest.raises(UserError, match=re.escape(message)):
            load_target(run_dir)


def test_rewind_drops_a_row_cut_short_by_a_kill(tmp_path: Path) -> None:
    from rlrun.record.formats import EVAL_CSV_HEADER
    from rlrun.run.resume_state import rewind_eval_csv

    path = tmp_path / "eval.csv"
    path.write_text(EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,2.5,0.0,1.0,2.0,0\n19")  # killed writing the row at 192
    rewind_eval_csv(path, 1000)
    assert path.read_text() == EVAL_CSV_HEADER + "64,1.5,0.0,,1.0,0\n128,2.5,0.0,1.0,2.0,0\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("x64,1.5,0.0,,1.0,0", "eval.csv line 2: 'timesteps' is 'x64', not an integer >= 0"),
        ("64,high,0.0,,1.0,0", "eval.csv line 2: 'mean_return' is 'high', not a number"),
        ("64,1.5", "eval.csv line 2 has 2 values, not 6"),
    ],
    ids=["timesteps", "mean_return", "short"],
)
def test_a_damaged_eval_csv_row_is_refused_before_training(
    crashed: Path, tmp_path: Path, row: str, message: str
) -> None:
    run_dir = tmp_path / "run"
    copy_of(crashed, run_dir)
    lines = (run_dir / "eval.csv").read_text().splitlines(keepends=True)
    (run_dir / "eval.csv").write_text("".join([lines[0], row + "\n", *lines[1:]]))  # not the last row: damage
    assert_resume_refused_untouched(run_dir, tmp_path, message)
