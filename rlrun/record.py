"""The run folder's own record: ``config.yaml`` (the authority) and ``run.json`` (status, provenance).

``run.json`` is rewritten atomically (temporary file, flush, rename) every time its status changes, so
a reader never sees a half-written file.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from rlrun.errors import UserError
from rlrun.keys import config_hash

_PACKAGES = {
    "rlrun": "rlrun",
    "stable_baselines3": "stable-baselines3",
    "gymnasium": "gymnasium",
    "torch": "torch",
    "hydra": "hydra-core",
}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically: a reader sees the old file or the new one, never a mix."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for key, dist in _PACKAGES.items():
        try:
            versions[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[key] = None
    return versions


def _git_commit() -> str | None:
    """The commit of the git repository the run was started from, if any."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


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
    def start(cls, run_dir: Path, cfg: DictConfig, meta: dict[str, Any], policy: str) -> RunRecord:
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
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
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
        data.update(status="running", pid=os.getpid(), host=platform.node(), error=None, final=None)
        data.setdefault("resumes", []).append(
            {"from_step": step, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": meta.get("command")}
        )
        record = cls(run_dir, data)
        record.save()
        return record

    def save(self) -> None:
        write_json(self.run_dir / "run.json", self.data)

    def finish(self, status: str, **fields: Any) -> None:
        """Record the end of the run: ``completed``, ``failed`` or ``interrupted``."""
        self.data.update(status=status, **fields)
        self.save()
