"""What a sweep tells the user (rlrun/sweep/summary.py): a job's outcome read from its folder, one line per job,
``sweep.json`` and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlrun.record import signatures
from rlrun.sweep.plan import REFUSE, SKIP, TRAIN, Job
from rlrun.sweep.summary import (
    JOB_STATUSES,
    LOG_NAME,
    JobOutcome,
    Watcher,
    job_line,
    jobs_word,
    summary,
    sweep_json,
    write_sweep_json,
)

INFO = {"command": "rlrun -m seed=0,1,2", "launcher": "joblib"}


def job(sweep_dir: Path, seed: int, action: str = TRAIN, reason: str | None = None) -> Job:
    folder = f"gridworld-ppo/seed-{seed}"
    return Job([f"seed={seed}"], folder, sweep_dir / folder, "h" * 64, action=action, reason=reason)


def write_record(job: Job, **record: Any) -> None:
    job.path.mkdir(parents=True, exist_ok=True)
    (job.path / "run.json").write_text(json.dumps(record))


FINAL = {"mean_return": 0.975, "success_rate": 1.0}


def test_outcomes_are_read_from_the_job_folders(tmp_path: Path) -> None:
    done, failed, killed, never = (job(tmp_path, k) for k in range(4))
    skipped, refused = job(tmp_path, 4, SKIP), job(tmp_path, 5, REFUSE, "a run of another config")
    write_record(skipped, status="completed", wall_s=3.0, final=FINAL)
    watcher = Watcher([done, failed, killed, never, skipped, refused])  # before the jobs ran
    assert [j.folder for j in watcher.jobs] == [done.folder, failed.folder, killed.folder, never.folder]
    write_record(done, status="completed", wall_s=12.5, final=FINAL)
    write_record(failed, status="failed", wall_s=1.0, error="Traceback ...\nRuntimeError: the simulator crashed\n")
    write_record(killed, status="running", wall_s=2.0)
    outcomes = {j.folder: watcher.outcome(j) for j in (done, failed, killed, never, skipped, refused)}
    assert [(o.status, o.wall_s) for o in outcomes.values()] == [
        ("completed", 12.5),
        ("failed", 1.0),
        ("interrupted", 2.0),
        ("not_started", None),
        ("skipped", 3.0),
        ("refused", None),
    ]
    assert outcomes[failed.folder].error == "RuntimeError: the simulator crashed"  # the last line of the error
    assert "ended without recording an outcome" in str(outcomes[killed.folder].error)
    assert outcomes[refused.folder].error == "a run of another config"


def test_an_old_run_json_left_in_place_is_not_this_invocations_outcome(tmp_path: Path) -> None:
    rerun = job(tmp_path, 0)
    write_record(rerun, status="failed", error="old")
    assert Watcher([rerun]).outcome(rerun).status == "not_started"


def test_watcher_prints_a_line_as_each_job_ends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = job(tmp_path, 0), job(tmp_path, 1)
    watcher = Watcher([first, second])
    write_record(first, status="completed", wall_s=1.0, final=FINAL)
    write_record(second, status="running", wall_s=1.0)
    watcher.poll()
    assert capsys.readouterr().out == "[1/2] gridworld-ppo/seed-0: completed, mean return 0.975, success 1.00, 1.0 s\n"
    watcher.poll()
    assert capsys.readouterr().out == ""  # each job once; a running job only at the end
    watcher.poll(final=True)
    assert capsys.readouterr().out.startswith("[2/2] gridworld-ppo/seed-1: interrupted, 1.0 s\n")


def test_job_lines(tmp_path: Path) -> None:
    one = job(tmp_path, 0)
    record = {"final": {"mean_return": 0.5, "success_rate": None}, "timesteps": 300}
    assert job_line(one, JobOutcome("completed", None, 12.34, record)) == (
        "gridworld-ppo/seed-0: completed, mean return 0.500, 12.3 s"
    )
    assert job_line(one, JobOutcome("interrupted", "stopped", None, record)) == (
        f"gridworld-ppo/seed-0: interrupted, at step 300\n    stopped\n    log: {one.path / LOG_NAME}"
    )
    assert job_line(one, JobOutcome("not_started", None, None, None)) == "gridworld-ppo/seed-0: not_started"


def test_sweep_json_counts_every_status_and_lists_every_job(tmp_path: Path) -> None:
    jobs = [job(tmp_path / "s", k) for k in range(3)]
    outcomes = [
        JobOutcome("completed", None, 1.5, None),
        JobOutcome("failed", "RuntimeError: boom", 0.5, None),
        JobOutcome("completed", None, 2.5, None),
    ]
    data = sweep_json(tmp_path / "s", jobs, outcomes, INFO, started="2026-11-22T12:00:00+0000")
    assert list(data) == ["sweep", "command", "launcher", "started", "ended", "counts", "jobs"]
    assert (data["sweep"], data["command"], data["launcher"]) == ("s", INFO["command"], "joblib")
    assert data["counts"] == {"planned": 3, **dict.fromkeys(JOB_STATUSES, 0), "completed": 2, "failed": 1}
    assert data["jobs"][1] == {
        "folder": "gridworld-ppo/seed-1",
        "overrides": ["seed=1"],
        "status": "failed",
        "error": "RuntimeError: boom",
        "log": f"gridworld-ppo/seed-1/{LOG_NAME}",
        "wall_s": 0.5,
    }
    path = write_sweep_json(tmp_path / "s", data)
    written = json.loads(path.read_text())
    assert path == tmp_path / "s" / "sweep.json" and signatures.verifies(written)  # tables trust its plan then
    assert {key: value for key, value in written.items() if key != signatures.SIGNATURE} == data


def test_summary_counts_then_names_each_job_that_did_not_end_well(tmp_path: Path) -> None:
    jobs = [job(tmp_path, k) for k in range(4)]
    outcomes = [
        JobOutcome("completed", None, 1.0, None),
        JobOutcome("failed", "RuntimeError: boom", 1.0, None),
        JobOutcome("refused", "a run of another config", None, None),
        JobOutcome("not_started", None, None, None),
    ]
    data = sweep_json(tmp_path, jobs, outcomes, INFO, started="")
    assert summary(tmp_path, data, jobs).splitlines() == [
        f"sweep {tmp_path} (joblib launcher): 4 jobs: 1 completed, 1 failed, 1 refused, 1 not started",
        "  failed: gridworld-ppo/seed-1",
        "    RuntimeError: boom",
        f"    log: {jobs[1].path / LOG_NAME}",
        "  refused: gridworld-ppo/seed-2",
        "    a run of another config",
    ]
    assert (jobs_word(1), jobs_word(0), jobs_word(2)) == ("1 job", "0 jobs", "2 jobs")


def test_a_job_its_scheduler_starts_again_is_told_again_until_its_last_line_is_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requeued = job(tmp_path, 0)  # SLURM: stopped by its time limit, requeued, resumed, and so on
    watcher = Watcher([requeued])
    write_record(requeued, status="interrupted", timesteps=72704, wall_s=53.2)
    watcher.poll()
    resumes = [{"from_step": 72704}]
    write_record(requeued, status="running", timesteps=72704, wall_s=53.2, resumes=resumes)
    watcher.poll()
    write_record(requeued, status="running", timesteps=80000, wall_s=60.0, resumes=resumes)  # trains on: no line
    watcher.poll()
    write_record(requeued, status="completed", timesteps=296960, wall_s=221.0, final=FINAL, resumes=resumes)
    watcher.poll()
    watcher.poll(final=True)
    assert capsys.readouterr().out.splitlines() == [
        "[1/1] gridworld-ppo/seed-0: interrupted, at step 72704, 53.2 s",
        "[1/1] gridworld-ppo/seed-0: started again by its scheduler, resuming from step 72704",
        "[1/1] gridworld-ppo/seed-0: completed, mean return 0.975, success 1.00, 221.0 s",
    ]
