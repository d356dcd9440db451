"""The run folder's own record: ``config.yaml`` (the authority) and ``run.json`` (status, provenance).

``run.json`` is a live record: rewritten atomically (temporary file, flush, rename), so a reader never
sees a half-written file, every time the status changes, after each periodic evaluation and snapshot,
and at least every 5 s of training (:mod:`rlrun.run.heartbeat`); ``updated`` is the time of the last rewrite, so
the age of a ``running`` record tells a live run from a dead one (on a cluster node whose pids cannot
be checked from here). A failure is recorded even on a full disk where it can be: a record that cannot be
written is logged instead (:meth:`RunRecord.fail`).
"""

from __future__ import annotations

import logging
import os
import platform
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from rlrun.config.backend import backend, is_jax
from rlrun.config.errors import UserError
from rlrun.config.keys import config_hash
from rlrun.record import signatures
from rlrun.record.formats import now, write_json, write_text
from rlrun.record.provenance import code_commit, run_commit, run_versions

# run.json's "status": a run is running until it ends in one of the other three
RUN_STATUSES = ("running", "completed", "failed", "interrupted")
END_STATUSES = RUN_STATUSES[1:]  # the statuses a run ends with (a `running` run whose pid is gone: interrupted)
# the ends that settle a run: one `interrupted` (stopped from outside) is continued when it is launched again
SETTLED_STATUSES = ("completed", "failed")

log = logging.getLogger("rlrun")


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
    def start(
        cls, run_dir: Path, cfg: DictConfig, meta: dict[str, Any], policy: str | None, resume_mode: str = "exact"
    ) -> RunRecord:
        """Create the record of a new run; refuses a folder that already holds a run. ``resume_mode``:
        ``exact`` or ``restart_episodes`` (:mod:`rlrun.checks.resume_mode`)."""
        run_dir.mkdir(parents=True, exist_ok=True)
        refuse_existing_run(run_dir)
        write_text(run_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))
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
                "versions": run_versions(is_jax(cfg)),
                "git": run_commit(),
                "rlrun_commit": code_commit(),  # the code that trained (rlrun's checkout or git URL), apart from git
                "command": meta.get("command"),
                "resume_mode": resume_mode,
                "backend": backend(cfg),  # torch (SB3) or jax (SBX)
            },
        )
        try:
            record.save()
        except OSError:  # a full disk: no config.yaml without its run.json, so the folder is no run
            (run_dir / "config.yaml").unlink(missing_ok=True)
            raise
        return record

    @classmethod
    def reopen(cls, run_dir: Path, data: dict[str, Any], step: int, meta: dict[str, Any]) -> RunRecord:
        """Mark an existing run as running again, noting the snapshot step it continues from."""
        data.update(status="running", pid=os.getpid(), host=platform.node(), error=None, final=None, timesteps=step)
        data.setdefault("resumes", []).append({"from_step": step, "at": now(), "command": meta.get("command")})
        record = cls(run_dir, data)
        record.save(sign=True)
        return record

    def save(self, sign: bool = False) -> None:
        """Rewrite ``run.json`` (atomically), stamped with the time in ``updated``; signed (in the run manifest)
        with ``sign`` and whenever the run is not running: a status change, and any rewrite after the end."""
        self.data["updated"] = now()
        write_json(self.run_dir / "run.json", self.data)
        if sign or self.data.get("status") != "running":
            signatures.sign_record(self.run_dir)

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

    def fail(self, error: BaseException, **fields: Any) -> bool:
        """Record that the run failed with ``error``; whether ``run.json`` could be written. Where it cannot
        (the full disk the error may be about), the log says so instead, and ``error`` stays the one raised."""
        try:
            self.finish("failed", error=f"{type(error).__name__}: {error}", **fields)
        except OSError as unwritten:
            log.error("run.json could not record the failure (%s): %s", unwritten, error)
            return False
        return True
