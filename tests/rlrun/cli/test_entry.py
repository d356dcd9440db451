"""The entry (rlrun/cli/main.py) does nothing at import, and a single run imports nothing of rlrun.sweep."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.rlrun.helpers import TINY_BUDGET

IMPORT_ONLY = """\
import sys
import rlrun.cli.main
from hydra.core.config_store import ConfigStore
store = ConfigStore.instance()
hydra = store.list("hydra") if "hydra" in store.list("") else []
sweepers = store.list("hydra/sweeper") if "sweeper" in hydra else []
print(json.dumps({"top": store.list(""), "sweepers": sweepers, "conf": "rlrun.conf" in sys.modules}))
"""

SINGLE_RUN = """\
import json, sys
from rlrun.cli import main as cli
sys.argv = ["rlrun", *sys.argv[1:]]
try:
    cli.main()  # the entry returns (no quick exit), so that this script prints afterwards
finally:
    print("modules:", json.dumps(sorted(m for m in sys.modules if m.startswith("rlrun.sweep"))))
"""


def python(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    code = f"import json\n{script}"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_importing_the_entry_registers_nothing(tmp_path: Path) -> None:
    result = python(IMPORT_ONLY, [], tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert "rlrun_schema.yaml" not in found["top"] and "rlrun.yaml" not in found["sweepers"]
    assert found["conf"] is False


def test_a_single_run_imports_nothing_of_the_sweep(tmp_path: Path) -> None:
    result = python(SINGLE_RUN, ["env=gridworld", "algo=ppo", *TINY_BUDGET], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mean return" in result.stdout + result.stderr
    modules = json.loads(result.stdout.rsplit("modules:", 1)[1])
    assert modules == []


RLRUN = Path(__file__).resolve().parents[3] / "rlrun"


def test_no_back_channels_between_rlruns_modules() -> None:
    sources = {path.relative_to(RLRUN).as_posix(): path.read_text() for path in RLRUN.rglob("*.py")}
    gone = ("RLRUN_SWEEP_ACTION", "RLRUN_SWEEP_PID", "env_set")
    assert [name for name, text in sources.items() if any(word in text for word in gone)] == []
    # a library's own switch (MUJOCO_GL, MLflow's retries) may be set; rlrun's data never travels this way
    written = re.compile(r"os\.environ\[[^]]*(RLRUN|GROUP|SWEEP|PID)[^]]*\]\s*=")
    assert [name for name, text in sources.items() if written.search(text)] == []
    assert [name for name, text in sources.items() if '"HYDRA_FULL_ERROR"' in text] == ["config/errors.py"]


def test_study_tracking_does_not_import_the_study(tmp_path: Path) -> None:
    result = python("import sys, rlrun.tune.tracking\nprint('rlrun.tune.study' in sys.modules)", [], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr
