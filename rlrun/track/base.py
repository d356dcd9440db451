"""What a run asks of a tracking logger (``conf/logger/<name>.yaml``): the :class:`Tracker` interface.

For whoever writes a logger (W&B's, ``rlrun/track/wandb.py``): a logger is a subclass of :class:`Tracker`,
named by its file ``conf/logger/<name>.yaml``, which holds one key named after itself:
``<name>: {_target_: rlrun.track.<name>.<Class>, _partial_: true, <settings>}``. :mod:`rlrun.track.loggers`
(the only place that instantiates) calls that partial with no arguments, so the settings are the class's
keyword arguments, and ``logger.<name>.<setting>=...`` overrides them. Nothing but the constructor runs
before :meth:`Tracker.check` (called before training, and before anything is written: raise
:class:`rlrun.config.errors.UserError` for a setting the user got wrong; it must not touch the network and
should not import the service's package); the service's package is imported in :meth:`Tracker.start` at
the earliest (the default ``logger=[tensorboard]`` imports nothing of MLflow or W&B). A run then calls
:meth:`~Tracker.start` once with a :class:`RunInfo`; SB3's scalars, the periodic evaluations
(``eval/*``) and the final metrics (``final/*``) reach :meth:`~Tracker.log_metrics` at their env step
through :meth:`~Tracker.output_format`, an SB3 ``KVWriter`` added to the model's ``Logger`` (the default,
:class:`ScalarsTo`, forwards every numeric scalar); :meth:`~Tracker.retry` after each periodic
evaluation; :meth:`~Tracker.finish` once at the end with ``completed``, ``failed`` or ``interrupted`` and
the files to upload (``config.yaml``, ``run.json``, ``eval.csv``, ``model.zip``, videos), then
:meth:`~Tracker.record` for ``run.json``'s ``tracking.<name>`` block (whatever a resume needs to continue
the same run: its id) and :meth:`~Tracker.unsent` for ``tracking.unsent``. The caller
(:class:`rlrun.track.session.Tracking`) catches every exception a tracker raises after :meth:`check`, warns
once per tracker and goes on: a tracking failure never costs a run; still, a tracker must not block
training for more than a few seconds in all (bound network calls, or make them from a thread of its own).
A sweep or a study calls :meth:`~Tracker.start_group` in its own process before any job starts and
:meth:`~Tracker.finish_group` when it ends; each job's :attr:`RunInfo.group` is what ``start_group``
returned (e.g. MLflow's parent run id; W&B's group is simply :attr:`RunInfo.sweep`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from stable_baselines3.common.logger import KVWriter


@dataclass
class RunInfo:
    """What a tracker knows about the run it logs: run.json's fields, the resolved config and where it stands."""

    run_dir: Path
    config: dict[str, Any]  # the resolved config, as config.yaml holds it (plain containers)
    env: str | None  # run.json's env: the env config's name (or the id made a folder name)
    env_id: str
    algo: str | None
    seed: int
    config_hash: str
    preset: str | None
    versions: dict[str, str | None]
    git: str | None
    sweep: str | None = None  # the sweep's (or the study's) name when the run is one of its jobs
    resumed_from: int | None = None  # the snapshot's env step when the run is resumed: log only steps after it
    previous: dict[str, Any] = field(default_factory=dict)  # run.json's whole tracking block, last session
    group: dict[str, Any] = field(default_factory=dict)  # what start_group returned, for a sweep's or study's job

    def params(self) -> dict[str, Any]:
        """The run's params: the resolved config flattened to dotted keys, plus its record's fields."""
        params = flatten(self.config)
        params.update(
            {
                "env": self.env,
                "env_id": self.env_id,
                "algo": self.algo,
                "seed": self.seed,
                "config_hash": self.config_hash,
                "preset": self.preset,
                "git": self.git,
                **{f"versions.{name}": version for name, version in self.versions.items()},
            }
        )
        return params

    def name_fields(self) -> dict[str, Any]:
        """The fields a tracker's run-name pattern may use (``{env}-{algo}-seed{seed}``)."""
        return {
            "env": self.env,
            "algo": self.algo,
            "seed": self.seed,
            "config_hash": self.config_hash,
            "sweep": self.sweep,
            "run": self.run_dir.name,
        }


def flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping as dotted keys (``algo.learning_rate``); lists and other leaves kept as they are."""
    flat: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


class Tracker:
    """A logger of the ``logger`` config group. Every method but :meth:`check` may fail: the caller catches,
    warns once and goes on. The defaults do nothing, so a logger overrides only what it uses."""

    name: ClassVar[str] = ""  # the key of this logger in conf/logger/ and in run.json's tracking block

    def check(self) -> None:
        """Refuse settings the user got wrong (:class:`~rlrun.config.errors.UserError`: exit 2), before training
        and before anything is written; no network, no import of the service's package."""

    def start(self, info: RunInfo) -> None:
        """Open (or, with ``info.previous``, continue) the service's run; log ``info.params()`` and the tags."""

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters (flat, dotted keys)."""

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Log scalars at an env step: SB3's (``train/*``, ``rollout/*``, ``time/*``), ``eval/*`` and ``final/*``."""

    def log_artifacts(self, paths: Sequence[Path]) -> None:
        """Upload files (those that exist)."""

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Set tags on the run (``sweep``, ``status``, ...)."""

    def retry(self) -> None:
        """Called after each periodic evaluation: send again what could not be sent so far."""

    def finish(self, status: str, artifacts: Sequence[Path] = ()) -> None:
        """End the run with ``status`` (one of :data:`END_STATUSES`) after uploading ``artifacts``; waits a few
        seconds at most for what is still being sent, and keeps what was not sent for ``rlrun-track sync``."""

    def record(self) -> dict[str, Any]:
        """run.json's ``tracking.<name>`` block: what identifies the service's run (its id, where it is)."""
        return {}

    def unsent(self) -> int:
        """How many calls have not reached the service yet (run.json's ``tracking.unsent`` adds them up)."""
        return 0

    def output_format(self, run_dir: Path, resumed_from: int | None) -> KVWriter:
        """The SB3 output format the model's ``Logger`` writes this logger's scalars through."""
        return ScalarsTo(self, resumed_from)

    def start_group(self, folder: Path, name: str, kind: str, previous: dict[str, Any]) -> dict[str, Any]:
        """A sweep's or a study's own run (``kind``: ``sweep``, ``study`` or ``trial``), before its jobs start;
        the record its jobs get as :attr:`RunInfo.group` and the group's next invocation as ``previous`` (for a
        study's trial, ``previous`` is ``{"parent": <the study's group record>}``). After it, ``log_params``,
        ``log_metrics`` and ``set_tags`` log into the group's run."""
        return {}

    def finish_group(self, record: dict[str, Any], status: str, artifacts: Sequence[Path] = ()) -> None:
        """The sweep or study ended (``completed`` or ``failed``): upload its files and end its run."""


class ScalarsTo(KVWriter):
    """SB3's output format (``Logger(folder, output_formats=[...])``) that hands the numeric scalars of each
    dump to a :class:`Tracker` at the dump's env step; TensorBoard-only values (HParams, figures, videos) and
    steps at or before a resume's snapshot (already logged by the earlier session) are left out."""

    def __init__(self, tracker: Tracker, resumed_from: int | None = None) -> None:
        self.tracker = tracker
        self.resumed_from = resumed_from

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        if self.resumed_from is not None and step <= self.resumed_from:
            return
        metrics = {
            key: float(value)
            for key, value in key_values.items()
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        }
        if metrics:
            self.tracker.log_metrics(metrics, step)
        if "eval/mean_reward" in key_values:  # a periodic evaluation was just written (rlrun.run.evaluation)
            self.tracker.retry()

    def close(self) -> None:
        """Nothing to close: the tracker's run ends with :meth:`Tracker.finish`."""
