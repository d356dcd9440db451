"""``rlrun-table`` reads run folders as data: the module of a run's ``module:Id`` env id is never imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.rlrun.table.helpers import make_run

MARKING_MODULE = "from pathlib import Path\nPath(__file__).with_name('imported').write_text('')\n"


def test_a_tables_run_never_imports_the_module_its_env_id_names(tmp_path: Path) -> None:
    (tmp_path / "marking.py").write_text(MARKING_MODULE)  # importable from the working directory
    for seed in (0, 1):
        make_run(tmp_path / "runs" / f"seed-{seed}", seed, 1.0, env=("evil", "marking:Evil-v0"))
    done = subprocess.run(
        [sys.executable, "-m", "rlrun.cli.table", str(tmp_path / "runs"), "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "table.csv").is_file() and not (tmp_path / "imported").exists()
