"""The tests' commands (``python -m rlrun ...``) forked from a process that has already imported rlrun, torch and
SB3, instead of started afresh: each fresh start spends about 2.5 CPU-seconds importing them, which across the
suite's hundreds of commands was most of its time.

A forked command is a real process of its own, as a fresh one is: its own pid (signals, kills and stops reach it
alone), its own working folder, environment, ``sys.argv``, ``sys.path`` (``python -m``'s first entry, the
command's ``PYTHONPATH``), stdin empty unless given, stdout and stderr captured or where asked; its exit status is
its ``SystemExit``'s, ``-N`` when signal N ended it, and the exit handlers a fresh process runs at its end (locks
released, trackers closed) run at its end too. What it cannot be is a process that has not imported torch yet, or
one whose interpreter read other ``PYTHON*`` variables at its start. So these start afresh: commands whose
environment sets such a variable, or puts a ``sitecustomize`` on its ``PYTHONPATH``, or turns rlrun's start-up
measures off (``RLRUN_FAST_START=0``: the tests CI runs that way run as a user who turned them off does); those
that ask (``fresh=True``: MuJoCo's renderer); and the files that test start-up itself and what a command imports
(``sys.modules``), which call :mod:`subprocess` directly.

How: one server per test process (:func:`_server`, started on first use, ended with the test process), a single
thread that imports :data:`PRELOAD` and then, for each command, forks a watcher; the watcher forks the command,
sends its pid, waits for its end (or for the test to go away, then SIGKILLs it) and sends its exit status.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rlrun.startup import bootstrap

ROOT = Path(__file__).resolve().parents[1]
# what a training command imports before it trains (rlrun-tune's forked seeds preload the same); not the modules
# commands run as ``-m`` (runpy would warn that they were imported before it ran them)
PRELOAD = ["rlrun.cli.single_run", "rlrun.run.training", "rlrun.run.check_suite", "torch._dynamo"]
_INTERPRETER_VARIABLES = "PYTHON"  # read by the interpreter as it starts: a forked command cannot honour them

_server_process: subprocess.Popen[bytes] | None = None
_server_address = ""


class ForkedCommand:
    """A command forked from the server, made and answering as :class:`subprocess.Popen` is (``pid``,
    ``returncode``, ``poll``, ``wait``, ``communicate``, ``send_signal``, ``terminate``, ``kill``; ``stdout`` and
    ``stderr`` pipes with ``subprocess.PIPE``). ``stdin``/``stdout``/``stderr``: None (this process's own),
    ``subprocess.PIPE``, ``subprocess.DEVNULL``, a file or a file descriptor (``stderr=subprocess.STDOUT`` too)."""

    def __init__(
        self,
        args: Sequence[str],
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stdin: Any = subprocess.DEVNULL,
        stdout: Any = None,
        stderr: Any = None,
        start_new_session: bool = False,
        text: bool = False,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self.stdin = self.stdout = self.stderr = None
        request = {
            "args": list(args),
            "cwd": str(Path(cwd or os.getcwd()).resolve()),
            "env": dict(os.environ if env is None else env),
            "new_session": start_new_session,
        }
        with contextlib.ExitStack() as close_after_sending:
            fds = [
                self._fd(stdin, 0, "stdin", text, close_after_sending),
                self._fd(stdout, 1, "stdout", text, close_after_sending),
            ]
            fds.append(
                fds[1] if stderr == subprocess.STDOUT else self._fd(stderr, 2, "stderr", text, close_after_sending)
            )
            self._connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._connection.connect(_server())
            socket.send_fds(self._connection, [json.dumps(request).encode() + b"\n"], fds)
        self.pid = int(_read_line(self._connection))

    def _fd(self, spec: Any, default: int, name: str, text: bool, close: contextlib.ExitStack) -> int:
        """The descriptor the command gets for one of its streams (``name``), made as Popen makes it."""
        if spec is None:
            return default
        if spec == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
        elif spec == subprocess.PIPE:
            read, write = os.pipe()
            ours, theirs = (write, read) if name == "stdin" else (read, write)
            mode = ("w" if name == "stdin" else "r") + ("" if text else "b")
            setattr(self, name, open(ours, mode))  # noqa: SIM115 - closed by communicate or the test
            fd = theirs
        elif isinstance(spec, int):
            return spec
        else:
            return spec.fileno()
        close.callback(os.close, fd)
        return fd

    def poll(self) -> int | None:
        """The exit status, or None while it runs."""
        if self.returncode is None and select.select([self._connection], [], [], 0)[0]:
            self._finish()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for its end; :class:`subprocess.TimeoutExpired` after ``timeout`` seconds (it goes on)."""
        if self.returncode is None:
            if not select.select([self._connection], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            self._finish()
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Read its piped outputs to their ends and wait for it (as Popen's, without input)."""
        outputs = [stream.read() if stream else None for stream in (self.stdout, self.stderr)]
        self.wait(timeout)
        return outputs[0], outputs[1]

    def send_signal(self, signum: int) -> None:
        """Signal the command (not the server), as Popen does: nothing once it has ended."""
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __enter__(self) -> ForkedCommand:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream:
                stream.close()
        self.wait()

    def _finish(self) -> None:
        self.returncode = int(_read_line(self._connection))
        self._connection.close()


def Popen(args: Sequence[str], **settings: Any) -> ForkedCommand | subprocess.Popen[Any]:  # noqa: N802
    """``subprocess.Popen([python, *args], **settings)``, forked where :func:`can_fork` says so, else afresh."""
    if can_fork(settings.get("env")):
        return ForkedCommand(args, **settings)
    settings.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen([sys.executable, *args], **settings)


def can_fork(env: Mapping[str, str] | None) -> bool:
    """Whether a command with ``env`` runs forked as it would afresh: start-up measures on (``RLRUN_FAST_START=0``
    asks for plain processes: its tests run afresh, as a user who turned them off runs), no interpreter variable of
    its own (``PYTHONPATH`` apart, which the command's ``sys.path`` takes as a fresh one's does)."""
    if not _measures_on(env) or _startup_hooks((env or os.environ).get("PYTHONPATH", "")):
        return False
    if env is None:
        return True

    def interpreter_variables(variables: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in variables.items() if k.startswith("PYTHON") and k != "PYTHONPATH"}

    return interpreter_variables(os.environ) == interpreter_variables(env)


def _startup_hooks(pythonpath: str) -> bool:
    """Whether ``pythonpath`` holds a module a fresh interpreter runs as it starts (``sitecustomize``)."""
    folders = [Path(entry) for entry in pythonpath.split(os.pathsep) if entry]
    return any((folder / f"{name}.py").exists() for folder in folders for name in ("sitecustomize", "usercustomize"))


def _measures_on(env: Mapping[str, str] | None) -> bool:
    with _environment(env):
        return bootstrap.enabled("preload")


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run(
    args: Sequence[str],
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    fresh: bool = False,
    start_new_session: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)``,
    forked unless ``fresh`` or ``env`` sets an interpreter variable of its own (then started afresh)."""
    if fresh or not can_fork(env):
        return subprocess.run(
            [sys.executable, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=start_new_session,
        )
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        command = ForkedCommand(args, cwd, env, subprocess.DEVNULL, stdout, stderr, start_new_session)
        try:
            returncode = command.wait(timeout)
        except subprocess.TimeoutExpired:
            command.kill()
            command.wait()
            raise
        texts = []
        for stream in (stdout, stderr):
            stream.seek(0)
            texts.append(stream.read())
    return subprocess.CompletedProcess([sys.executable, *args], returncode, texts[0], texts[1])


def _server() -> str:
    """The address of this process's server, started on first use with this process's environment."""
    global _server_process, _server_address
    if _server_process is None or _server_process.poll() is not None:
        folder = tempfile.mkdtemp(prefix="forked-commands-")
        _server_address = os.path.join(folder, "socket")
        _server_process = subprocess.Popen(
            [sys.executable, "-m", "tests.forked_commands", _server_address],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert _server_process.stdout is not None
        if _server_process.stdout.readline().strip() != b"ready":  # hang guard: the server's own start failing
            raise RuntimeError(f"the forked-commands server did not start (exit {_server_process.wait()})")
        atexit.register(_stop_server, _server_process)
    return _server_address


def _stop_server(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()


def _read_line(connection: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = connection.recv(64)
        if not chunk:
            raise RuntimeError(f"the forked-commands server closed the connection ({data!r})")
        data += chunk
    return data.decode().strip()


# The server's side


def serve(address: str) -> NoReturn:
    """Import :data:`PRELOAD`, say ``ready`` on stdout, then fork a watcher for each command asked for."""
    for module in PRELOAD:
        importlib.import_module(module)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, _reap)  # the watchers are reaped as they end (their CPU time counted in ours)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a command signalled before its start ends, as a fresh one does
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _watch(connection)
        connection.close()


def _reap(*_: object) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _watch(connection: socket.socket) -> NoReturn:
    """In a watcher: fork the command, send its pid, then its exit status; SIGKILL it if the test goes away."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    request = json.loads(message)
    pid = os.fork()
    if pid == 0:
        connection.close()
        _command(request, fds)
    connection.sendall(f"{pid}\n".encode())
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([connection.fileno(), pidfd], [], [])
    if pidfd not in ready:  # the test closed its end: it went away, or gave up on the command
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    try:
        connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    finally:
        os._exit(0)


def _command(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In the command's process: ``python ARGS`` as a fresh interpreter would run it, its streams ``fds``."""
    if request["new_session"]:
        os.setsid()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    _set_path(request["env"].get("PYTHONPATH", ""))
    os.environ.clear()
    os.environ.update(request["env"])
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        os.close(fd)
    os._exit(_main(request["args"], request["cwd"]))


def _set_path(pythonpath: str) -> None:
    """``sys.path`` as a fresh interpreter with ``PYTHONPATH=pythonpath`` has it (its first entry is set later)."""
    server = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[1:] = [entry for entry in pythonpath.split(os.pathsep) if entry] + [
        entry for entry in sys.path[1:] if entry not in server
    ]


def _main(args: list[str], cwd: str) -> int:
    """Run ``python ARGS`` in this process; return its exit status (a signal ends the process as Python would)."""
    try:
        try:
            if args[0] == "-m":
                sys.argv = ["", *args[2:]]  # runpy sets argv[0] to the module's file, as python -m does
                sys.path[0] = cwd
                runpy.run_module(args[1], run_name="__main__", alter_sys=True)
            elif args[0] == "-c":
                sys.argv = ["-c", *args[2:]]
                sys.path[0] = ""
                exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
            else:
                sys.argv = list(args)
                sys.path[0] = str(Path(args[0]).resolve().parent)
                runpy.run_path(args[0], run_name="__main__")
            code: Any = 0
        except SystemExit as exit_:
            code = exit_.code
        except KeyboardInterrupt:
            traceback.print_exc()
            code = -signal.SIGINT
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            atexit._run_exitfuncs()  # what a fresh interpreter runs at its end; os._exit below would skip it
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    if code is None:
        return 0
    if isinstance(code, int):
        if code < 0:  # as Python does on an uncaught KeyboardInterrupt: end by the signal
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        return code & 0xFF
    print(code, file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    serve(sys.argv[1])
