"""Resume modes (rlrun.checks.resume_mode): decided per run from a real round trip of the env stack, recorded in
run.json, and a stop is clean in either mode. Envs of the conventions that keep a stack from resuming exactly are
in tests/rlrun/resume_envs.py; each trains with snapshots, stops on a real SIGINT as ``interrupted`` and resumes
to completion in ``restart_episodes``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import warnings
from pathlib import Path

import pytest

from rlrun.checks import resume_mode
from rlrun.run import snapshots
from rlrun.run.training import resume, train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.resume_helpers import Crash, crash_at

REPO = Path(__file__).resolve().parents[3]
TEST_ENV = "env.id=tests.rlrun.resume_envs:resumetest/{}"
HOLDS_LAMBDA = "+wrappers.holds_lambda={_target_:tests.rlrun.resume_envs.HoldsLambda,_partial_:true}"
# PPO in 64-step rollouts per copy: evaluations and snapshots every 128 steps, 512 in all
SMALL = [
    "algo=ppo",
    "~tuned",
    "total_timesteps=512",
    "algo.n_steps=64",
    "algo.batch_size=64",
    "algo.policy_kwargs={net_arch:[8]}",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "snapshot.every=128",
    "progress_bar=false",
]


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # tests.rlrun.resume_envs, in subprocess workers too
    return forked_commands.run([*args], cwd=cwd, env=env, timeout=300)


def record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def stop_on_sigint_and_resume(run_dir: Path, overrides: list[str]) -> tuple[str, str]:
    """Train in a child process that gets SIGINT after its evaluation at step 128, then resume it in another;
    returns what each printed."""
    stop = ["-m", "tests.rlrun.signal_run", "SIGINT", "1", "128", "self", *overrides, f"hydra.run.dir={run_dir}"]
    stopped = rlrun(stop, run_dir.parent)
    assert stopped.returncode == 128 + signal.SIGINT, stopped.stderr
    interrupted = record(run_dir)
    assert interrupted["status"] == "interrupted" and 0 < interrupted["timesteps"] < 512
    assert interrupted["resume_mode"] == "restart_episodes"
    newest = snapshots.list_snapshots(run_dir / "snapshots")[-1]
    state = snapshots.load_state(newest)
    assert state["resume_mode"] == "restart_episodes" and state["train_env"] is None and state["eval_env"] is None
    resumed = rlrun(["-m", "rlrun", f"resume={run_dir}", "progress_bar=false"], run_dir.parent)
    assert resumed.returncode == 0, resumed.stderr
    done = record(run_dir)
    assert done["status"] == "completed" and done["timesteps"] == 512 and done["resume_mode"] == "restart_episodes"
    return stopped.stdout + stopped.stderr, resumed.stdout + resumed.stderr


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (["env=gym", TEST_ENV.format("Local-v0")], "does not pickle"),
        (["env=gym", TEST_ENV.format("Walk-v0"), HOLDS_LAMBDA], "HoldsLambda.__init__.<locals>.<lambda>"),
        (["env=gym", TEST_ENV.format("Detached-v0"), "env.n_envs=2", "env.vec_env=subproc"], "cannot step"),
    ],
    ids=["local-function-registration", "lambda-holding-wrapper", "copy-cannot-step-subproc"],
)
def test_an_env_stack_that_does_not_round_trip_stops_and_resumes_restarting_episodes(
    tmp_path: Path, overrides: list[str], reason: str
) -> None:
    stopped, resumed = stop_on_sigint_and_resume(tmp_path / "run", [*overrides, *SMALL])
    assert "resume mode: restart_episodes" in stopped and reason in stopped  # the run's first lines say why
    assert "resume mode: restart_episodes, as recorded in run.json" in resumed


def test_rlruns_own_envs_resume_exactly_and_hold_their_envs_in_snapshots(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=gridworld", "algo=ppo", "env.n_envs=2", "env.vec_env=subproc"), 256)
    train(cfg, tmp_path)
    assert record(tmp_path)["resume_mode"] == "exact"
    state = snapshots.load_state(snapshots.list_snapshots(tmp_path / "snapshots")[-1])
    assert state["resume_mode"] == "exact" and len(state["train_env"]) == 2  # each subprocess worker's env


def test_mujoco_envs_resume_restarting_episodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decided = resume_mode.decide(compose_config("env=invertedpendulum"))
    assert decided.mode == "restart_episodes" and "went on differently" in decided.reason  # EzPickle: a new env
    cfg = shrink(compose_config("env=invertedpendulum", "algo=ppo", "~tuned", "algo.n_steps=64"), 256)
    with monkeypatch.context() as patch:
        crash_at(patch, 200)
        with pytest.raises(Crash):
            train(cfg, tmp_path)
    assert record(tmp_path)["resume_mode"] == "restart_episodes"
    resume(tmp_path, progress_bar="false")
    assert record(tmp_path)["status"] == "completed" and record(tmp_path)["timesteps"] == 256


def test_envs_that_stop_pickling_after_the_round_trip_give_snapshots_without_envs(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=gym", TEST_ENV.format("LateLock-v0"), "algo=ppo", "algo.n_steps=64"), 256)
    train(cfg, tmp_path)  # exact by its round trip; its envs hold a lock from step 100 on
    assert record(tmp_path)["status"] == "completed" and record(tmp_path)["resume_mode"] == "exact"
    state = snapshots.load_state(snapshots.list_snapshots(tmp_path / "snapshots")[-1])
    assert state["resume_mode"] == "restart_episodes" and state["train_env"] is None


def test_her_resumes_restarting_episodes_with_its_unfinished_episode_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    restart = resume_mode.ResumeMode("restart_episodes", "as a test decides")
    monkeypatch.setattr(resume_mode, "decide", lambda cfg: restart)
    with monkeypatch.context() as patch:
        crash_at(patch, 150)
        with pytest.raises(Crash):
            train(config("env=pointgoal", "algo=her", steps=256), tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # HER's advice to keep the episode: this resume cuts it on purpose
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        resume(tmp_path, progress_bar="false")
    assert record(tmp_path)["status"] == "completed" and record(tmp_path)["resume_mode"] == "restart_episodes"
