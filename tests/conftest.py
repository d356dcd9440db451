"""Fixtures for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rlrun.record.signatures import KEY_ENV


@pytest.fixture(scope="session", autouse=True)
def trust_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Runs sign with a key of the test session (never the user's own), also in the commands tests start."""
    before = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = str(tmp_path_factory.mktemp("trust") / "trust.key")
    yield os.environ[KEY_ENV]
    if before is None:
        os.environ.pop(KEY_ENV, None)
    else:
        os.environ[KEY_ENV] = before


@pytest.fixture(scope="session", autouse=True)
def sb3_logdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's default logger (tests that call ``learn`` themselves) makes a folder; in the session's, not in /tmp."""
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before


@pytest.fixture(scope="session", autouse=True)
def jax_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """JAX's compilation cache (algo.backend=jax) shared by the session's runs, not the user's ~/.cache."""
    before = os.environ.get("RLRUN_JAX_CACHE")
    os.environ["RLRUN_JAX_CACHE"] = str(tmp_path_factory.mktemp("jax-cache"))
    yield
    if before is None:
        os.environ.pop("RLRUN_JAX_CACHE", None)
    else:
        os.environ["RLRUN_JAX_CACHE"] = before
