"""Library lines that belong in the log, not on the console: a launcher's repr of itself and each job's internal
overrides, MLflow's creation of its database. Inside :func:`to_log_files` they go to the log files only (the
run's ``rlrun.log``, Hydra's file handler; or a file named here, a sweep's ``<sweep>/rlrun.log``).

Output rlrun cannot catch this way (a banner printed by C code, such as ALE's) is listed in docs/errors.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# What Hydra's launchers log as they start a sweep's jobs: their own settings and each job's overrides,
# rlrun's internal ones among them (hydra.sweep.dir...).
LAUNCHER_LOGGERS = (
    "hydra._internal.core_plugins.basic_launcher",
    "hydra_plugins.hydra_joblib_launcher",
    "hydra_plugins.hydra_submitit_launcher",
    "hydra_plugins.hydra_ray_launcher",
    "hydra_plugins.rlrun_ray_launcher",
)
# MLflow's lines as it creates or upgrades a database store (its own handler prints them to stderr).
MLFLOW_STORE_LOGGERS = ("mlflow.store.db.utils", "alembic")
_FORMAT = "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"  # as Hydra's rlrun.log


@contextmanager
def to_log_files(names: tuple[str, ...], path: Path | None = None) -> Iterator[None]:
    """Inside the block, what the loggers ``names`` log at INFO and above goes to the root logger's log files
    (and to ``path``, appended to, when given), never to the console; warnings and errors still reach the
    console too. Their handlers are put back after it."""
    files: list[logging.Handler] = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    own: logging.FileHandler | None = None
    if path is not None:
        own = logging.FileHandler(path, encoding="utf-8")
        own.setFormatter(logging.Formatter(_FORMAT))
        files.append(own)
    console = [h for h in logging.getLogger().handlers if not isinstance(h, logging.FileHandler)]
    saved = []
    for name in names:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers = [*files, *(_WarningsOnly(h) for h in console)]
        logger.propagate = False
    try:
        yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers, logger.propagate = handlers, propagate
        if own is not None:
            own.close()


class _WarningsOnly(logging.Handler):
    """Passes on only warnings and errors to ``handler`` (a console handler)."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__(logging.WARNING)
        self.handler = handler

    def emit(self, record: logging.LogRecord) -> None:
        self.handler.handle(record)
