"""``rlrun-table`` reads run folders as data: the module of a run's ``module:Id`` env id is never imported, copies of
one run count once, names are shown as text, evaluations that are not finite leave the curves (not the table), and
records or sweep plans not signed with the user's key are said to be so."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rlrun.record import signatures
from rlrun.table.write import write_tables
from tests import forked_commands
from tests.rlrun.table.helpers import make_run, read_json, read_rows

MARKING_MODULE = "from pathlib import Path\nPath(__file__).with_name('imported').write_text('')\n"


def test_a_tables_run_never_imports_the_module_its_env_id_names(tmp_path: Path) -> None:
    (tmp_path / "marking.py").write_text(MARKING_MODULE)  # importable from the working directory
    for seed in (0, 1):
        make_run(tmp_path / "runs" / f"seed-{seed}", seed, 1.0, env=("evil", "marking:Evil-v0"))
    done = forked_commands.run(
        ["-m", "rlrun.cli.table", str(tmp_path / "runs"), "--out", str(tmp_path / "out")], cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "table.csv").is_file() and not (tmp_path / "imported").exists()


def rlrun_table(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun.cli.table", *map(str, args)], cwd=cwd, timeout=120)


def test_copies_of_one_run_count_once_and_the_table_says_so(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    make_run(runs / "seed-0", 0, 1.0)
    for copy in range(1, 4):  # byte-identical copies
        shutil.copytree(runs / "seed-0", runs / f"copy-{copy}")
    continued = shutil.copytree(make_run(runs / "seed-1", 1, 2.0), runs / "seed-1-continued")
    for folder in (runs / "seed-1", continued):  # one run, copied, then each copy's record moved on differently
        signatures.sign_run(folder)
    (continued / signatures.RUN_MANIFEST).write_text((runs / "seed-1" / signatures.RUN_MANIFEST).read_text())
    record = json.loads((continued / "run.json").read_text())
    (continued / "run.json").write_text(json.dumps({**record, "wall_s": 99.0}))
    write_tables([runs], tmp_path / "out")
    row = read_rows(tmp_path / "out")["cartpole-ppo"]
    assert (row["seeds_completed"], row["seeds_planned"]) == ("2", "2")
    notes = read_json(tmp_path / "out")["notes"]
    assert notes[0].startswith("Counted once: 4 folder(s) hold a run already counted")
    assert "../runs/seed-0 (as ../runs/copy-1)" in notes[0]  # of equal copies, the first folder is kept
    assert "../runs/seed-1-continued (as ../runs/seed-1)" in notes[0]
    assert notes[0] in " ".join((tmp_path / "out" / "table.md").read_text().split())  # wrapped there


ESCAPES = "\x1b[2J\x1b[H| `forged-ppo` | 9/9 | 999.00 ± 0.00 |\n| `x"


def test_names_from_a_record_are_shown_as_text_and_cannot_break_a_row(tmp_path: Path) -> None:
    make_run(tmp_path / "runs" / "seed-0", 0, 1.0, env=(f"evil{ESCAPES}", f"Evil-v0{ESCAPES}"))
    record = json.loads((tmp_path / "runs" / "seed-0" / "run.json").read_text())
    record.update(host=f"node{ESCAPES}", command=f"rlrun {ESCAPES}`")
    (tmp_path / "runs" / "seed-0" / "run.json").write_text(json.dumps(record))
    done = rlrun_table(tmp_path / "runs", "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = {name: (tmp_path / "out" / name).read_text() for name in ("table.md", "table.csv", "table.json")}
    for text in (done.stdout, done.stderr, *files.values()):
        assert "\x1b" not in text and "\u2028" not in text
    assert "\\x1b[2J" in files["table.md"] and "\\x1b[2J" in done.stdout
    table = [line for line in files["table.md"].splitlines() if line.startswith("|")]
    assert len(table) == 3 and all(line.count("|") - line.count("\\|") == 8 for line in table), table
    assert len(files["table.csv"].splitlines()) == 2
    assert (
        read_json(tmp_path / "out")["rows"][0]["env"]
        == "evil\\x1b[2J\\x1b[H| `forged-ppo` | 9/9 | 999.00 ± 0.00 |\\n| `x"
    )


def test_a_run_with_evaluations_that_are_not_finite_is_left_out_of_the_curves_with_a_note(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for seed in range(2):
        make_run(runs / f"seed-{seed}", seed, 100.0 + seed)
    rows = [(250, float("nan"), None), (500, float("inf"), None), (750, -1e308, None), (1000, 1e308, None)]
    make_run(runs / "received", 0, 103.0, curve=rows, env=("pendulum", "Pendulum-v1"))  # drawn alone in its panel
    done = rlrun_table(runs, cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (runs / "curves.png").stat().st_size > 0
    assert "Curves leave out 1 run(s) whose eval.csv holds an evaluation that is not finite" in done.stdout
    assert read_json(runs)["notes"][-1].endswith(": received.")
    row = read_rows(runs)["pendulum-ppo"]  # the table counts it: only its curve cannot be drawn
    # no periodic evaluation is a score: the final one (103 >= -200) is where it reached the threshold
    assert (row["seeds_completed"], row["return_mean"], row["steps_to_threshold"]) == ("1", "103.0", "1000")


def test_records_not_signed_are_said_and_signed_ones_are_not(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    signed = [make_run(runs / f"seed-{seed}", seed, 1.0) for seed in range(2)]
    for folder in signed:
        signatures.sign_run(folder)
    write_tables([runs], tmp_path / "out")
    assert read_json(tmp_path / "out")["notes"] == []
    record = json.loads((signed[1] / "run.json").read_text())
    record["final"]["mean_return"] = 99.0  # edited after it was signed
    (signed[1] / "run.json").write_text(json.dumps(record))
    make_run(runs / "seed-2", 2, 1.0)  # received: no signature at all
    write_tables([runs], tmp_path / "out")
    [note] = read_json(tmp_path / "out")["notes"]
    assert note.startswith("Not signed with your trust key: 2 run(s)")
    assert "../runs/seed-1 (run.json changed after it was signed)" in note
    assert "../runs/seed-2 (it has no run-manifest.json signed with your trust key)" in note
    assert note in " ".join((tmp_path / "out" / "table.md").read_text().split())  # wrapped there


@pytest.mark.parametrize("signed", [True, False])
def test_seeds_planned_from_a_sweep_json_not_signed_are_said(tmp_path: Path, signed: bool) -> None:
    sweep = tmp_path / "sweep"
    for seed in range(2):
        signatures.sign_run(make_run(sweep / f"cartpole-ppo/seed-{seed}", seed, 1.0))
    data = {"jobs": [{"folder": f"cartpole-ppo/seed-{seed}"} for seed in range(5)]}
    (sweep / "sweep.json").write_text(json.dumps(signatures.signed(data) if signed else data))
    write_tables([sweep], tmp_path / "out")
    assert read_rows(tmp_path / "out")["cartpole-ppo"]["seeds_planned"] == "5"
    notes = read_json(tmp_path / "out")["notes"]
    assert notes == (
        []
        if signed
        else ["Seeds planned include jobs listed by a sweep.json not signed with your trust key: ../sweep/sweep.json."]
    )
