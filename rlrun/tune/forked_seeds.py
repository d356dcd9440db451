"""A study's seeds forked from a process that has already imported what a run needs.

A seed started as a fresh ``python -m rlrun`` spends its first seconds importing torch, SB3 and Hydra, about
2.5 CPU-seconds on these machines, and ``torch._dynamo``, which torch's optimizers import on their first step,
about 1 more: with 4 seeds a trial, more than a tiny trial's training. So rlrun-tune starts a fork server
(Python's ``forkserver`` start method) that imports them once (:mod:`rlrun.tune.seed_fork_server`), and forks
each seed from it, as a sweep's joblib workers are (:mod:`rlrun.sweep.warm_up`). The fork server is a
single-threaded process of its own, started on the first seed: no thread of rlrun-tune is forked, and a command
refused before its first seed starts none.

A forked seed is what a fresh one is: ``python -m rlrun``'s own module run (``runpy``, as ``-m`` runs it) with
the same arguments, working folder, ``sys.argv[0]`` and ``sys.path[0]``, its stdout and stderr in its
``output.log``, stdin empty; so its run folder is the same, apart from wall times, pids and clock times. It has
its own pid (stopped by SIGTERM, then SIGKILL), its exit status is its ``SystemExit``'s (``-N`` when signal N
ended it), and it ends when rlrun-tune does: it watches rlrun-tune's pid and sends itself SIGTERM once that
process has gone (it snapshots and ends ``interrupted``), as a fresh seed's ``PR_SET_PDEATHSIG`` does.

It is a start-up measure: ``RLRUN_FAST_START=0`` turns it off (:mod:`rlrun.startup.bootstrap`), and the seeds are
then fresh processes (:class:`rlrun.tune.seed_runs.SeedRun`).

Private API, each behind one function that says why: ``atexit._run_exitfuncs`` (:func:`_run_exit_handlers`:
a forked child ends with ``os._exit``, skipping the exit handlers a fresh process runs) and
``multiprocessing.forkserver._forkserver._forkserver_pid`` (:func:`rlrun.startup.bootstrap.stop_fork_server`); Python
has no public call for either.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.forkserver
import os
import runpy
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path

from rlrun.record.liveness import wait_for_exit
from rlrun.startup import bootstrap

# What a seed imports before it trains: python -m rlrun's entry, the run itself with SB3 and torch, and
# torch._dynamo (torch's optimizers import it on their first step). Module names: the fork server imports them
# (its one module, rlrun.tune.seed_fork_server, between the bootstrap's preload_begin() and preload_end()).
RUN_MODULES = ["rlrun.cli.main", "rlrun.cli.single_run", "rlrun.run.training", "torch._dynamo"]
PRELOAD = ["rlrun.tune.seed_fork_server"]
WATCH_EVERY_S = 1.0  # where Linux's pidfd is missing: how often a seed looks whether rlrun-tune is still there

_forked: weakref.WeakSet[BaseProcess] = weakref.WeakSet()  # this process's seeds, SIGTERMed if still going at its end
_server_started = False


def available() -> bool:
    """Whether seeds can be forked here (Python's ``forkserver`` start method: Linux and macOS)."""
    return "forkserver" in multiprocessing.get_all_start_methods()


class ForkedSeed:
    """A seed's process forked from the fork server, answering as :class:`subprocess.Popen` does (``pid``,
    ``returncode``, ``poll``, ``wait``, ``terminate``, ``kill``), so that a seed is stopped and waited for alike
    however it started."""

    def __init__(self, process: BaseProcess) -> None:
        self.process = process

    @property
    def pid(self) -> int | None:
        """The seed's own pid."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once it has ended (``-N`` for signal N), else None."""
        return self.process.exitcode

    def poll(self) -> int | None:
        """The exit status, or None while it runs."""
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for its end; :class:`subprocess.TimeoutExpired` after ``timeout`` seconds."""
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired(f"seed process {self.process.pid}", timeout or 0.0)
        return self.process.exitcode

    def terminate(self) -> None:
        """SIGTERM: the run snapshots and ends ``interrupted``."""
        self.process.terminate()

    def kill(self) -> None:
        """SIGKILL."""
        self.process.kill()


def start(args: Sequence[str], output: Path) -> ForkedSeed:
    """Fork ``python -m rlrun ARGS`` from the fork server (started with the first seed), its stdout and stderr
    written to ``output``."""
    if not _server_started:
        _start_fork_server()
    context = multiprocessing.get_context("forkserver")
    process = context.Process(target=_seed_main, args=(list(args), str(output), os.getpid()), name="rlrun-seed")
    process.start()
    _forked.add(process)
    return ForkedSeed(process)


def _start_fork_server() -> None:
    """The fork server, preloading :data:`PRELOAD`, ended with this process (:func:`_at_exit`)."""
    global _server_started
    multiprocessing.set_forkserver_preload(PRELOAD)
    multiprocessing.forkserver.ensure_running()
    atexit.register(_at_exit)
    _server_started = True


def _at_exit() -> None:
    """rlrun-tune ends: SIGTERM its seeds still going (a fresh seed gets it from ``PR_SET_PDEATHSIG``), then end
    the fork server, which would otherwise hold rlrun-tune's output streams open while it tears torch down."""
    for process in list(_forked):
        if process.exitcode is None:
            process.terminate()
    bootstrap.stop_fork_server()


def _seed_main(args: list[str], output: str, tune_pid: int) -> None:  # pragma: no cover - runs in the seed
    """In the forked seed: ``python -m rlrun ARGS >output 2>&1 </dev/null``, ended when rlrun-tune ends."""
    threading.Thread(target=_terminate_after, args=(tune_pid,), name="rlrun-tune-watchdog", daemon=True).start()
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)  # stdin: multiprocessing gives the child /dev/null
    sys.argv = ["", *args]  # runpy puts rlrun/__main__.py first, as python -m does
    sys.path[0] = os.getcwd()  # python -m's first entry: the working folder (rlrun-tune's may be its script's)
    try:
        runpy.run_module("rlrun", run_name="__main__", alter_sys=True)
    except SystemExit:
        raise
    except BaseException:  # as Python reports an uncaught exception (multiprocessing would add its own line)
        sys.excepthook(*sys.exc_info())
        raise SystemExit(1) from None
    finally:
        _run_exit_handlers()


def _run_exit_handlers() -> None:  # pragma: no cover - runs in the seed
    """The exit handlers a fresh process runs as it ends (the run folder's lock file removed, the trackers'
    runs closed, logging flushed): a forked child ends with ``os._exit``, which skips them. Private API:
    ``atexit._run_exitfuncs``, the call Python's own shutdown makes; there is no public one."""
    atexit._run_exitfuncs()  # noqa: SLF001


def _terminate_after(pid: int) -> None:  # pragma: no cover - runs in the seed
    """SIGTERM this seed once the process ``pid`` (rlrun-tune) has ended."""
    wait_for_exit(pid, WATCH_EVERY_S)
    os.kill(os.getpid(), signal.SIGTERM)
