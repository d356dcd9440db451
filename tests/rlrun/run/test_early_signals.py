"""A stop signal in a run's first moments, and ``nohup`` (issue 48): a signal between run.json's first write and
training ends the run ``interrupted``, as any stop does (it ended the process by the signal's default action,
leaving a ``running`` record); a SIGHUP ``nohup`` ignored stays ignored (rlrun/run/signals.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlrun.run import signals
from tests import forked_commands
from tests.rlrun.helpers import QUICK_BUDGET

# train() in a process of its own, sending itself SIGTERM right after run.json's first write (as the record is
# signed), before the training's handlers are in place
RACE = textwrap.dedent(
    """
    import os, signal, sys
    from rlrun.record import signatures
    from rlrun.run import training
    from rlrun.run.interrupts import RunInterrupted
    from tests.rlrun.helpers import compose_config

    sign_run = signatures.sign_run
    def sign_then_stop(run_dir):
        sign_run(run_dir)
        os.kill(os.getpid(), signal.SIGTERM)
    signatures.sign_run = sign_then_stop
    try:
        training.train(compose_config(*sys.argv[2:]), sys.argv[1])
    except RunInterrupted as stop:
        sys.exit(stop.exit_status)
    """
)


def test_a_stop_between_the_first_record_and_training_is_recorded_interrupted(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [str(run_dir), "env=gridworld", "algo=ppo", *QUICK_BUDGET]
    done = subprocess.run(
        [sys.executable, "-c", RACE, *args], cwd=Path(__file__).parents[3], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stderr  # was -15: the default action
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "interrupted" and record["timesteps"] == 0
    assert list((run_dir / "snapshots").glob("step-*")), "a snapshot to resume from"


@pytest.fixture
def hangup_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_hangup_nohup_ignored_stays_ignored(hangup_ignored: None) -> None:
    received: list[int] = []
    with signals.handling(lambda signum, _frame: received.append(signum)):
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGHUP)  # the terminal closes: the run goes on
        os.kill(os.getpid(), signal.SIGUSR2)
    assert received == [signal.SIGUSR2]
    with signals.deferring():
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_signals_kept_before_a_handler_go_to_it_and_else_to_the_handlers_before() -> None:
    before: list[int] = []
    previous = signal.signal(signal.SIGUSR2, lambda signum, _frame: before.append(signum))
    try:
        received: list[int] = []
        with signals.deferring():
            os.kill(os.getpid(), signal.SIGUSR2)  # before training handles it: kept
            assert received == before == []
            with signals.handling(lambda signum, _frame: received.append(signum)):
                assert received == [signal.SIGUSR2]  # handed over as training starts
        assert before == []
        with signals.deferring():
            os.kill(os.getpid(), signal.SIGUSR2)  # no handler inside took it
        assert before == [signal.SIGUSR2]  # raised again, to the handler before
    finally:
        signal.signal(signal.SIGUSR2, previous)


# A Hydra callback of the user's that hangs the terminal up once Hydra has made the run's folder, before rlrun's task
HANG_UP = """
import os, signal
from hydra.experimental.callback import Callback


class HangUp(Callback):
    def on_job_start(self, config, **kwargs):
        os.kill(os.getpid(), signal.SIGHUP)
"""


def test_a_hangup_while_hydra_makes_the_run_folder_ends_the_run_interrupted(tmp_path: Path) -> None:
    (tmp_path / "hang_up.py").write_text(HANG_UP)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    args = ["-m", "rlrun", "env=gridworld", "algo=ppo", *QUICK_BUDGET, "hydra.run.dir=run"]
    done = forked_commands.run([*args, "+hydra.callbacks.hup._target_=hang_up.HangUp"], cwd=tmp_path, env=env)
    # before: the process ended by SIGHUP's default action (-1), the folder holding .hydra/ and an empty log
    assert done.returncode == 128 + signal.SIGHUP, done.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "interrupted" and record["timesteps"] == 0
    assert "interrupted by SIGHUP; snapshot written" in done.stderr + done.stdout
