"""Fixtures for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rlrun.record.signatures import KEY_ENV


@pytest.fixture(scope="session", autouse=True)
def trust_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Runs sign with a key of the test session (never the user's own), also in the commands tests start."""
    with pytest.MonkeyPatch.context() as patch:  # restored when the session ends
        patch.setenv(KEY_ENV, str(tmp_path_factory.mktemp("trust") / "trust.key"))
        yield os.environ[KEY_ENV]


@pytest.fixture(scope="session", autouse=True)
def session_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Folders libraries write to by default, in the session's temporary folder: SB3's default logger (tests that
    call ``learn`` themselves), not /tmp; JAX's compilation cache (algo.backend=jax, shared by the session's runs),
    not the user's ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        patch.setenv("RLRUN_JAX_CACHE", str(tmp_path_factory.mktemp("jax-cache")))
        yield
