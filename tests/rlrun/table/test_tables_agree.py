"""A table that agrees with itself: steps to threshold counts the final evaluation the scores come from, the prose
under it reads on a terminal, its provenance names the code that trained, and a folder without runs is answered
before the plotting stack is loaded."""

from __future__ import annotations

import json
from pathlib import Path

from rlrun.table.write import write_tables
from tests import forked_commands
from tests.rlrun.table.helpers import make_run, read_rows

CODE = "c0de" * 10


def test_the_final_evaluation_that_reached_the_threshold_counts(tmp_path: Path) -> None:
    """Success 1.00 beside '– (0/1)' read as a contradiction: the final evaluation (the score) reached it."""
    curve = [(500, 0.0, 0.2), (1000, 0.0, 0.6)]  # the periodic evaluations never reach 0.9
    make_run(tmp_path / "runs/seed-0", 0, 1.0, success=1.0, curve=curve, env=("gw", "rlrun/GridWorld-v0"))
    write_tables([tmp_path / "runs"], tmp_path / "out")
    row = read_rows(tmp_path / "out")["gw-ppo"]
    assert (row["success_iqm"], row["steps_to_threshold"], row["reached"]) == ("1.0", "1000", "1")
    text = " ".join((tmp_path / "out/table.md").read_text().split())
    assert "| 1.00 – | 1,000 (1/1) |" in text
    assert "the first evaluation that reached it (the periodic ones of eval.csv, then the final one)" in text


def test_the_prose_under_a_table_wraps_and_its_provenance_names_the_code(tmp_path: Path) -> None:
    run = make_run(tmp_path / "runs/seed-0", 0, 1.0)
    record = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**record, "rlrun_commit": CODE, "git": None}))
    make_run(tmp_path / "runs/seed-1", 1, 2.0)  # written before run.json named the code: none
    write_tables([tmp_path / "runs"], tmp_path / "out")
    lines = (tmp_path / "out/table.md").read_text().splitlines()
    prose = [line for line in lines if line and not line.startswith(("|", "- "))]
    assert len(prose) > 5 and max(map(len, prose)) <= 80
    footer = " ".join(lines[lines.index(next(line for line in lines if line.startswith("<sub>"))) :])
    assert f"rlrun's code at git {CODE[:12]};" in footer and "started in folders at git 0123456789ab;" in footer


def test_a_folder_without_runs_is_answered_before_scipy_and_matplotlib_load(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    probe = (
        "import sys\nfrom rlrun.cli import table\ntry:\n    table.main([sys.argv[1]])\nexcept SystemExit as e:\n"
        "    print('exit', e.code, sorted(m for m in ('matplotlib', 'scipy') if m in sys.modules))\n"
    )
    done = forked_commands.run(["-c", probe, str(tmp_path / "empty")], timeout=300)
    assert done.stdout.strip() == "exit 2 []", done.stdout + done.stderr
    assert "no runs found" in done.stderr
