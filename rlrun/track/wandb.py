"""``logger=[..., wandb]``: each run as a Weights & Biases run, written under ``<run_dir>/wandb/``.

With no API key on the machine (``mode: auto``), W&B runs offline: it writes the run into
``<run_dir>/wandb/offline-run-<time>-<id>/`` and needs no network, and ``wandb sync <run_dir>/wandb/offline-run-*``
uploads it later. With a key it runs online; an online start that fails (no network, a refused key) falls back
to offline with one warning, so a run never waits on W&B for more than ``timeout_s``.

A run logs its params (the resolved config flattened, with its record's fields), SB3's scalars and rlrun's
evaluations at their env step (W&B's ``_step`` is the env step), the tags ``sweep:<name>`` and
``status:<status>`` (also the summary's ``status``), the run folder's files at its end (``model.zip`` as a
``model`` artifact) and W&B's exit code (0 completed, 1 failed, 255 interrupted). A resumed run continues the
same W&B run id (run.json's ``tracking.wandb.run_id``) and logs only the steps after its snapshot, since W&B
drops a step lower than one it already holds. A sweep's jobs share the sweep's name as their W&B group.

Nothing of wandb is imported before :meth:`WandbTracker.start`.
"""

from __future__ import annotations

import fnmatch
import logging
import netrc
import os
import re
import secrets
import string
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rlrun.config.errors import UserError
from rlrun.track.base import RunInfo, Tracker

log = logging.getLogger("rlrun")

MODES = ("auto", "offline", "online", "disabled")
# the fields a run name pattern may use
NAME_FIELDS = ("env", "algo", "seed", "config_hash", "sweep", "run")
# W&B's exit code per run.json status: non-zero marks the W&B run failed; 255 is W&B's own code for Ctrl-C
EXIT_CODES = {"completed": 0, "failed": 1, "interrupted": 255}
# hosts a netrc entry may name for W&B's cloud (``wandb login`` writes the first; 0.31's default URL is the second)
CLOUD_HOSTS = ("api.wandb.ai", "api.forge.coreweave.com")
# characters W&B refuses in a project name
PROJECT_FORBIDDEN = "/\\#?%:"
TAG_LENGTH = 64  # W&B's longest tag
ID_CHARACTERS = string.ascii_lowercase + string.digits
# a session's folder under <run_dir>/wandb/
SESSION = re.compile(r"(offline-)?run-(?P<time>\d{8}_\d{6})-(?P<id>[a-z0-9]+)")


def api_key_configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether W&B would find credentials: ``WANDB_API_KEY``, an identity token file, or a netrc entry for
    the W&B server (``WANDB_BASE_URL``, or W&B's cloud)."""
    if environ.get("WANDB_API_KEY") or environ.get("WANDB_IDENTITY_TOKEN_FILE"):
        return True
    path = Path(environ.get("NETRC") or Path.home() / ".netrc").expanduser()
    try:
        entries = netrc.netrc(str(path))
    except (OSError, netrc.NetrcParseError):
        return False
    hosts = [urlsplit(environ["WANDB_BASE_URL"]).netloc] if environ.get("WANDB_BASE_URL") else list(CLOUD_HOSTS)
    return any((found := entries.authenticators(host)) is not None and bool(found[2]) for host in hosts)


def resolved_mode(mode: str, environ: Mapping[str, str] = os.environ) -> str:
    """The W&B mode a run uses: ``auto`` follows ``WANDB_MODE`` when set, else online with an API key and
    offline without one."""
    if mode != "auto":
        return mode
    chosen = environ.get("WANDB_MODE", "").lower()
    if chosen in ("offline", "dryrun"):
        return "offline"
    if chosen in ("online", "run", "disabled"):
        return "disabled" if chosen == "disabled" else "online"
    return "online" if api_key_configured(environ) else "offline"


def run_folders(run_dir: Path) -> list[Path]:
    """W&B's folders of the run (one per session: ``offline-run-<time>-<id>`` or ``run-<time>-<id>``), oldest first."""
    found = [(match, path) for path in (run_dir / "wandb").glob("*run-*") if (match := SESSION.fullmatch(path.name))]
    return [path for match, path in sorted(found, key=lambda each: each[0]["time"]) if path.is_dir()]


def session_id(folder: Path) -> str:
    """The W&B run id a session's folder is named with."""
    match = SESSION.fullmatch(folder.name)
    assert match is not None, folder
    return match["id"]


def upload(run_dir: Path, timeout_s: float = 600) -> int:
    """Upload the run's offline W&B sessions with W&B's own client (``wandb sync``, the machine's credentials),
    for ``rlrun-track sync``; its exit status: 0 when there is nothing to upload, 124 when it took longer than
    ``timeout_s`` (``wandb sync`` retries an unreachable server for minutes)."""
    folders = [str(path) for path in run_folders(run_dir) if path.name.startswith("offline-run-")]
    if not folders:
        return 0
    try:
        return subprocess.run([sys.executable, "-m", "wandb", "sync", *folders], timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:
        log.warning("wandb sync of %s took more than %g s and was stopped", run_dir, timeout_s)
        return 124


def new_id() -> str:
    """A W&B run id: 8 characters from W&B's alphabet (lower-case letters and digits)."""
    return "".join(secrets.choice(ID_CHARACTERS) for _ in range(8))


class WandbTracker(Tracker):
    """A W&B run per rlrun run, offline unless an API key is configured (the settings: conf/logger/wandb.yaml)."""

    name = "wandb"

    def __init__(
        self,
        project: str = "rlrun",
        entity: str | None = None,
        mode: str = "auto",
        group: str | None = None,
        run_name: str = "{env}-{algo}-seed{seed}",
        tags: Sequence[str] = (),
        artifacts: Sequence[str] = ("config.yaml", "run.json", "eval.csv", "model.zip", "*.mp4", "*.gif", "videos/*"),
        timeout_s: float = 15,
        wait_s: float = 10,
    ) -> None:
        self.project, self.entity, self.mode, self.group = project, entity, mode, group
        self.run_name = run_name
        self.tags = [tags] if isinstance(tags, str) else list(tags)  # logger.wandb.tags=baseline: one tag
        self.artifacts = [artifacts] if isinstance(artifacts, str) else list(artifacts)
        self.timeout_s, self.wait_s = timeout_s, wait_s
        self.run: Any = None  # wandb's Run while the run is open
        self.run_dir: Path | None = None
        self.shown_dir: Path | None = None
        self.run_id: str | None = None
        self.used_mode: str | None = None  # the mode the run logs in (offline after a failed online start)
        self.fell_back = False
        self.floor = -1  # steps at or below it were logged by an earlier session
        self.last_step = -1
        self.labels: dict[str, str] = {}  # rlrun's tags: sweep, status
        self.used_group: str | None = None
        self.pending = 0  # calls logged offline after a failed online start

    def check(self) -> None:
        """The settings, before training (no import of wandb, no network)."""
        if self.mode not in MODES:
            raise UserError(
                f"logger.wandb.mode is {self.mode!r}",
                f"choose one of {', '.join(MODES)} (auto: online with an API key, else offline)",
            )
        if not isinstance(self.project, str) or not self.project or any(c in self.project for c in PROJECT_FORBIDDEN):
            raise UserError(
                f"logger.wandb.project is {self.project!r}",
                f"name a W&B project: a non-empty name without any of {PROJECT_FORBIDDEN}",
            )
        try:
            self.run_name.format(**{field: "x" for field in NAME_FIELDS})
        except (KeyError, IndexError, ValueError) as error:
            raise UserError(
                f"logger.wandb.run_name {self.run_name!r} cannot be filled in ({type(error).__name__}: {error})",
                f"use only the fields {', '.join('{' + field + '}' for field in NAME_FIELDS)}",
            ) from None
        for tag in self.tags:
            if not isinstance(tag, str) or not tag or len(tag) > TAG_LENGTH:
                raise UserError(
                    f"logger.wandb.tags holds {tag!r}",
                    f"give tags as a list of non-empty strings of at most {TAG_LENGTH} characters",
                )
        for seconds in ("timeout_s", "wait_s"):
            if not isinstance(getattr(self, seconds), (int, float)) or getattr(self, seconds) <= 0:
                raise UserError(f"logger.wandb.{seconds} is {getattr(self, seconds)!r}", "give a number of seconds > 0")

    def start(self, info: RunInfo) -> None:
        """Open the W&B run (or, for a resumed run, continue the earlier session's run id) and log the params."""
        previous = info.previous.get(self.name) or {}  # run.json's tracking block of the earlier session
        self.run_id = previous.get("run_id") or self._earlier_id(info) or new_id()
        earlier_steps = [info.resumed_from, previous.get("last_step")]
        self.floor = max((step for step in earlier_steps if isinstance(step, int)), default=-1)
        self.last_step = self.floor
        kind = info.group.get("kind", "sweep")  # a sweep's job, or one seed of a study's trial
        if info.sweep:
            self.labels[kind] = info.sweep
        fields = info.name_fields()
        # a trial's seeds join the study's group (their trial's record names it), as W&B job type their trial
        group = self.group or (info.group.get(self.name) or {}).get("group") or info.sweep
        job_type = info.sweep if kind == "trial" else None
        if self._open(info.run_dir, self.run_name.format(**fields), group, job_type):
            self.run.config.update(info.params(), allow_val_change=True)  # a resume may run newer package versions

    def _open(self, folder: Path, name: str, group: str | None, job_type: str | None) -> bool:
        """Open the W&B run ``self.run_id`` under ``folder``/wandb; an online start that fails opens it offline."""
        self.used_mode = resolved_mode(self.mode)
        if self.used_mode == "disabled":
            return False
        self.shown_dir = folder  # as the user gave it, for the messages
        self.run_dir = folder.resolve()  # W&B's records name files by absolute paths: wandb sync runs anywhere
        self.used_group = group
        self.labels["status"] = "running"
        try:
            self.run = self._init(self.used_mode, name, group, job_type)
        except Exception as error:  # noqa: BLE001 - an online start that fails logs offline instead
            if self.used_mode != "online":
                raise
            log.warning(
                "tracking: wandb could not start online (%s: %s); logging offline into %s/wandb; upload later "
                "with: wandb sync %s/wandb/offline-run-*",
                type(error).__name__,
                error,
                folder,
                folder,
            )
            self.used_mode, self.fell_back = "offline", True
            import wandb

            wandb.teardown()  # W&B's service still holds the run id of the failed start
            self.run = self._init("offline", name, group, job_type)
        return True

    def _earlier_id(self, info: RunInfo) -> str | None:
        """A resumed run whose record lost its W&B id (the earlier session was killed): the newest W&B folder's."""
        if info.resumed_from is None:
            return None  # a run started afresh (a failed sweep job run again) is a new W&B run
        folders = run_folders(info.run_dir)
        return session_id(folders[-1]) if folders else None

    def _init(self, mode: str, name: str, group: str | None, job_type: str | None) -> Any:
        """``wandb.init`` in ``mode``: files under the run folder, no console capture, no output of W&B's own."""
        import wandb

        assert self.run_dir is not None
        online = mode == "online"
        # W&B's process-wide settings in the run's mode: offline, its own telemetry stays off the network too
        wandb.setup(settings=wandb.Settings(mode="online" if online else "offline", silent=True, console="off"))
        settings = wandb.Settings(
            silent=True,  # nothing of W&B's on rlrun's terminal
            console="off",  # stdout and stderr left alone (rlrun's log is its own)
            disable_git=True,  # rlrun logs the commit itself (param ``git``)
            save_code=False,
            reinit="create_new",  # several runs open at once in one process: a study's trials
            init_timeout=float(self.timeout_s),
            finish_timeout=float(self.wait_s) if online else 0.0,
        )
        return wandb.init(
            dir=str(self.run_dir),
            project=self.project,
            entity=self.entity,
            id=self.run_id,
            resume="allow",
            name=name,
            group=group,
            job_type=job_type,
            tags=self._tags(),
            mode="online" if online else "offline",
            settings=settings,
        )

    def _tags(self) -> list[str]:
        tags = [*self.tags, *(f"{key}:{value}" for key, value in self.labels.items())]
        return [tag[:TAG_LENGTH] for tag in tags]

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Params go to the W&B run's config."""
        if self.run is not None:
            self.run.config.update(dict(params), allow_val_change=True)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Scalars at an env step; a step W&B would drop (at or before one already logged) is left out."""
        if self.run is None or step <= self.floor or step < self.last_step:
            return
        self.run.log(dict(metrics), step=step)
        self.last_step = step
        self.pending += self.fell_back

    def log_artifacts(self, paths: Sequence[Path]) -> None:
        """The files the ``artifacts`` setting names: ``model.zip`` as a ``model`` artifact (referenced in place,
        not copied), the others as the run's files (linked from W&B's folder; uploaded now or by ``wandb sync``)."""
        if self.run is None or self.run_dir is None:
            return
        import wandb

        for path in (path.resolve() for path in paths):
            relative = path.relative_to(self.run_dir).as_posix() if path.is_relative_to(self.run_dir) else path.name
            if not path.is_file() or not any(fnmatch.fnmatch(relative, pattern) for pattern in self.artifacts):
                continue
            if relative == "model.zip":
                model = wandb.Artifact(f"model-{self.run_id}", type="model", metadata={"step": self.last_step})
                model.add_file(str(path), policy="immutable")  # no copy in W&B's staging folder
                self.run.log_artifact(model)
            else:
                base = self.run_dir if path.is_relative_to(self.run_dir) else path.parent
                self.run.save(str(path), base_path=str(base), policy="now")
            self.pending += self.fell_back

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """rlrun's tags as ``key:value`` W&B tags (a key's new value replaces its old one)."""
        self.labels.update({key: str(value) for key, value in tags.items()})
        if self.run is not None:
            self.run.tags = tuple(self._tags())

    def finish(self, status: str, artifacts: Sequence[Path] = ()) -> None:
        """Upload the files, set the status (tag and summary) and end the W&B run with its exit code."""
        if self.run is None:
            return
        run = self.run
        try:
            self.set_tags({"status": status})
            run.summary["status"] = status
            self.log_artifacts(artifacts)
        finally:
            self.run = None
            run.finish(exit_code=EXIT_CODES.get(status, 1))
        if self.used_mode == "offline" and not self.fell_back:
            log.info(
                "wandb: run %s saved offline; upload it with: wandb sync %s/wandb/offline-run-*",
                self.run_id,
                self.shown_dir,
            )

    def start_group(self, folder: Path, name: str, kind: str, previous: dict[str, Any]) -> dict[str, Any]:
        """W&B groups runs by a name, so a sweep or a study needs no run of its own: a sweep's jobs take its name
        as their group. A study's trial is a run in the study's group (job type ``trial``), holding the trial's
        values (config), seeds and state (tags) and objective (a metric); its seeds' runs join the same group."""
        if kind != "trial":
            return {}
        study = self.group or (previous.get("parent") or {}).get("name") or name
        self.run_id = new_id()
        self.labels["study"] = study
        if not self._open(folder, name, study, "trial"):
            return {}
        return {"group": study, "run_id": self.run_id}

    def finish_group(self, record: dict[str, Any], status: str, artifacts: Sequence[Path] = ()) -> None:
        """End the trial's run with its status (a sweep's or a study's has none)."""
        self.finish(status, artifacts)

    def record(self) -> dict[str, Any]:
        """run.json's ``tracking.wandb``: the W&B run's id (a resume continues it), its mode, its last step."""
        if self.run_id is None:
            return {}
        return {
            "run_id": self.run_id,
            "mode": self.used_mode,
            "project": self.project,
            "entity": self.entity,
            "group": self.used_group,
            "last_step": self.last_step if self.last_step >= 0 else None,
        }

    def unsent(self) -> int:
        """Calls kept offline because the online start failed (``wandb sync`` sends them); a run offline by
        choice has nothing unsent."""
        return self.pending
