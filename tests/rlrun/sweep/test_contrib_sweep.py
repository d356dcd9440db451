"""A sweep over two of sb3-contrib's algorithms, run as a user runs it (``python -m rlrun -m``), then its table:
each job trains, sits in its own ``<env>-<algo>`` folder, and both algorithms are rows of ``rlrun-table``."""

from __future__ import annotations

import csv
from pathlib import Path

from tests import forked_commands
from tests.rlrun.helpers import read_run_json
from tests.rlrun.sweep_helpers import sweep

TINY = [
    "env=cartpole",
    "algo=qrdqn,ars",
    "~tuned",  # sb3-contrib's defaults, not the Zoo's presets
    "seed=0,1",
    "total_timesteps=256",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=1",
    "snapshot.every=128",
    "progress_bar=false",
    "sweep=contrib",
]


def test_a_sweep_over_two_contrib_algorithms_trains_each_and_tables_them(tmp_path: Path) -> None:
    result = sweep(TINY, tmp_path)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "outputs" / "sweeps" / "contrib"
    runs = sorted(p.parent for p in folder.rglob("run.json"))
    assert [run.relative_to(folder).parts[0] for run in runs] == ["cartpole-ars"] * 2 + ["cartpole-qrdqn"] * 2
    assert all(read_run_json(run)["status"] == "completed" for run in runs)

    table = forked_commands.run(["-m", "rlrun.cli.table", str(folder)], cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    with open(folder / "table.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(row["algo"] for row in rows) == ["ars", "qrdqn"], rows
