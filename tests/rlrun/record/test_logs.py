"""Library lines that belong in the log (rlrun/record/logs.py): MLflow's creation of its database store goes to
rlrun.log, not the console."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlrun.record import logs


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """A root file handler, as Hydra's rlrun.log."""
    path = tmp_path / "rlrun.log"
    handler = logging.FileHandler(path)
    logging.getLogger().addHandler(handler)
    yield path
    logging.getLogger().removeHandler(handler)
    handler.close()


def test_a_new_mlflow_store_says_so_in_the_log_not_on_the_console(
    tmp_path: Path, log_file: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mlflow")
    from rlrun.track.mlflow_store import Store

    Store(f"sqlite:///{tmp_path / 'mlflow.db'}", "quiet").open()
    captured = capfd.readouterr()
    assert "Creating initial MLflow database tables" not in captured.out + captured.err
    assert "Creating initial MLflow database tables" in log_file.read_text()


def test_warnings_still_reach_the_console(log_file: Path, capfd: pytest.CaptureFixture[str]) -> None:
    console = logging.StreamHandler()
    logging.getLogger().addHandler(console)
    try:
        logging.getLogger("some.library").setLevel(logging.INFO)
        with logs.to_log_files(("some.library",)):
            logging.getLogger("some.library").warning("a warning")
            logging.getLogger("some.library").info("a detail")
    finally:
        logging.getLogger().removeHandler(console)
    err = capfd.readouterr().err
    assert "a warning" in err and "a detail" not in err
    assert "a detail" in log_file.read_text()
    assert logging.getLogger("some.library").propagate  # put back
