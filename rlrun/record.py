"""The run folder's own record: ``config.yaml`` (the authority) and ``run.json`` (status, provenance).

``run.json`` is a live record: rewritten atomically (temporary file, flush, rename), so a reader never
sees a half-written file, every time the status changes, after each periodic evaluation and snapshot,
and at least every ``HEARTBEAT_S`` seconds of training; ``updated`` is the time of the last rewrite, so
the age of a ``running`` record tells a live run from a dead one (on a cluster node whose pids cannot
be checked from here).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.callbacks import BaseCallback

from rlrun.errors import UserError
from rlrun.keys import config_hash

HEARTBEAT_S = 60.0  # longest time between two rewrites of a running run's run.json

_PACKAGES = {
    "rlrun": "rlrun",
    "stable_baselines3": "stable-baselines3",
    "gymnasium": "gymnasium",
    "torch": "torch",
    "hydra": "hydra-core",
}


def now() -> str:
    """The local time in ISO 8601 with its UTC offset, as run.json records times."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically: a reader sees the old file or the new one, never a mix."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None where it is missing, truncated or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for key, dist in _PACKAGES.items():
        try:
            versions[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[key] = None
    return versions


def _git_dir(start: Path) -> Path | None:
    """The ``.git`` folder of the repository holding ``start`` (a worktree's ``.git`` file points to it)."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file() and (text := dot_git.read_text().strip()).startswith("gitdir:"):
            return (folder / text.removeprefix("gitdir:").strip()).resolve()
    return None


def _git_commit() -> str | None:
    """The commit of the git repository the run was started from, if any (read from ``.git``, no subprocess)."""
    try:
        git_dir = _git_dir(Path.cwd())
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or None  # detached HEAD
        ref = head.removeprefix("ref:").strip()
        common = git_dir / (git_dir / "commondir").read_text().strip() if (git_dir / "commondir").is_file() else git_dir
        for folder in (git_dir, common):
            if (folder / ref).is_file():
                return (folder / ref).read_text().strip() or None
        packed = common / "packed-refs"
        lines = packed.read_text().splitlines() if packed.is_file() else []
        return next((line.split()[0] for line in lines if line.endswith(f" {ref}")), None)
    except (OSError, UnicodeDecodeError):
        return None


def refuse_existing_run(run_dir: Path) -> None:
    """A new run never writes over another: refuse a folder that already holds a ``run.json``."""
    if (run_dir / "run.json").exists():
        raise UserError(
            f"{run_dir} already holds a run; a new run never writes over another",
            f"to continue it use resume={run_dir}; for a new run leave hydra.run.dir at its default",
        )


class RunRecord:
    """Writes ``config.yaml`` once and keeps ``run.json`` current as the run moves on."""

    def __init__(self, run_dir: Path, data: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.data = data

    @classmethod
    def start(cls, run_dir: Path, cfg: DictConfig, meta: dict[str, Any], policy: str | None) -> RunRecord:
        """Create the record of a new run; refuses a folder that already holds a run."""
        run_dir.mkdir(parents=True, exist_ok=True)
        refuse_existing_run(run_dir)
        (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
        record = cls(
            run_dir,
            {
                "status": "running",
                "env": meta.get("env"),
                "env_id": cfg.env.id,
                "algo": meta.get("algo"),
                "preset": meta.get("preset"),
                "policy": policy,
                "seed": cfg.seed,
                "config_hash": config_hash(cfg),
                "overrides": list(meta.get("overrides", [])),
                "total_timesteps": cfg.total_timesteps,
                "timesteps": 0,
                "wall_s": None,
                "fps": None,
                "final": None,
                "error": None,
                "pid": os.getpid(),
                "host": platform.node(),
                "started": now(),
                "versions": _versions(),
                "git": _git_commit(),
                "command": meta.get("command"),
            },
        )
        record.save()
        return record

    @classmethod
    def reopen(cls, run_dir: Path, data: dict[str, Any], step: int, meta: dict[str, Any]) -> RunRecord:
        """Mark an existing run as running again, noting the snapshot step it continues from."""
        data.update(status="running", pid=os.getpid(), host=platform.node(), error=None, final=None, timesteps=step)
        data.setdefault("resumes", []).append({"from_step": step, "at": now(), "command": meta.get("command")})
        record = cls(run_dir, data)
        record.save()
        return record

    def save(self) -> None:
        """Rewrite ``run.json`` (atomically), stamped with the time in ``updated``."""
        self.data["updated"] = now()
        write_json(self.run_dir / "run.json", self.data)

    @staticmethod
    def counts(timesteps: int, wall_s: float | None) -> dict[str, Any]:
        """``timesteps``, ``wall_s`` (seconds of training across all sessions of the run) and ``fps``."""
        wall_s = None if wall_s is None else round(wall_s, 3)
        return {"timesteps": timesteps, "wall_s": wall_s, "fps": round(timesteps / wall_s, 1) if wall_s else None}

    def progress(self, timesteps: int, wall_s: float | None) -> None:
        """Record the steps done and the seconds of training so far."""
        self.data.update(self.counts(timesteps, wall_s))
        self.save()

    def finish(self, status: str, **fields: Any) -> None:
        """Record the end of the run: ``completed``, ``failed`` or ``interrupted``."""
        self.data.update(status=status, **fields)
        self.save()


class KeepRecordCurrent(BaseCallback):
    """Rewrites ``run.json`` with the steps and seconds so far after each periodic evaluation (the same
    schedule: every ``eval_every`` steps), and at least every :data:`HEARTBEAT_S` seconds.

    ``wall`` returns the seconds of training across the run's sessions; put this callback after the
    evaluation callback, so the record is written once the evaluation is done.
    """

    def __init__(self, record: RunRecord, wall: Callable[[], float], eval_every: int) -> None:
        super().__init__()
        self.record, self.wall, self.eval_every = record, wall, eval_every
        self.next_eval = eval_every
        self.last_save = time.monotonic()

    def _on_training_start(self) -> None:
        self.next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every

    def _on_step(self) -> bool:
        evaluated = self.num_timesteps >= self.next_eval
        if evaluated:
            self.next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every
        if evaluated or time.monotonic() - self.last_save >= HEARTBEAT_S:
            self.save(self.num_timesteps)
        return True

    def save(self, timesteps: int) -> None:
        """Record ``timesteps`` steps done, with the training seconds of now."""
        self.record.progress(timesteps, self.wall())
        self.last_save = time.monotonic()
