"""Received folders and trust keys that ended ``rlrun-table``, ``rlrun-trust`` and ``rlrun-eval`` in a traceback
(issue 48): a ``config.yaml`` holding a ``!!python/object/apply`` tag is left out or refused (never constructed),
``RLRUN_TRUST_KEY`` naming a folder or a path that cannot be made is said with the fix (exit 2), and a sweep's
``.hydra/`` records are never signed as runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlrun.cli import eval as eval_cli
from rlrun.cli import table as table_cli
from rlrun.cli import trust as trust_cli
from rlrun.record import signatures
from tests.rlrun.helpers import run_folder
from tests.rlrun.table.helpers import make_run

APPLY = 'benchmark: !!python/object/apply:os.system ["touch {marker}"]\n'


def exit_status(main, argv: list[str]) -> int:  # noqa: ANN001 - a command's main
    with pytest.raises(SystemExit) as ended:
        main(argv)
    return int(ended.value.code or 0)


def with_apply_tag(folder: Path, marker: Path) -> Path:
    with (folder / "config.yaml").open("a") as config:
        config.write(APPLY.format(marker=marker))
    return folder


def test_rlrun_table_leaves_out_a_run_whose_config_holds_a_python_tag(tmp_path: Path, caplog, capsys) -> None:  # noqa: ANN001
    make_run(tmp_path / "runs" / "seed-0", 0, 1.0)
    with_apply_tag(make_run(tmp_path / "runs" / "seed-1", 1, 2.0), tmp_path / "constructed")
    table_cli.main([str(tmp_path / "runs"), "--out", str(tmp_path / "out")])  # returns: the table is written
    err = capsys.readouterr().err + caplog.text
    assert "leaving out" in err and "seed-1" in err and "holds what rlrun never loads" in err
    assert "Traceback" not in err and not (tmp_path / "constructed").exists()
    assert (tmp_path / "out" / "table.csv").is_file()


def test_rlrun_trust_refuses_a_config_holding_a_python_tag_and_signs_nothing(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    folder = with_apply_tag(run_folder(tmp_path / "run", signed=False), tmp_path / "constructed")
    assert exit_status(trust_cli.main, ["--yes", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "config.yaml cannot be read as data" in err and "holds what rlrun never loads" in err
    assert "fix:" in err and "Traceback" not in err
    assert not (folder / signatures.RUN_MANIFEST).exists() and not (tmp_path / "constructed").exists()


def test_rlrun_trust_of_a_sweep_signs_its_runs_never_hydras_records(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    sweep = tmp_path / "sweep"
    jobs = [run_folder(sweep / "gridworld-ppo" / f"seed-{seed}", signed=False) for seed in (0, 1)]
    for record in (sweep / ".hydra", *(job / ".hydra" for job in jobs)):  # Hydra's, as a sweep leaves them
        record.mkdir()
        (record / "config.yaml").write_text("hydra:\n  run:\n    dir: .\n")
    shutil.copytree(
        jobs[0], sweep / "gridworld-ppo" / "seed-0" / "attempts" / "1", ignore=shutil.ignore_patterns("attempts")
    )
    assert exit_status(trust_cli.main, ["--yes", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert ".hydra" not in out
    assert not list(sweep.glob(f"**/.hydra/{signatures.RUN_MANIFEST}"))
    assert all((job / signatures.RUN_MANIFEST).is_file() for job in jobs)


@pytest.mark.parametrize("key", ["folder", "uncreatable"])
@pytest.mark.parametrize("command", ["rlrun-trust", "rlrun-eval"])
def test_a_trust_key_that_is_a_folder_or_cannot_be_made_is_said_with_the_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
    key: str,
    command: str,  # noqa: ANN001
) -> None:
    folder = run_folder(tmp_path / "run")  # signed under the session's key
    if key == "folder":
        (tmp_path / "keys").mkdir()
        monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "keys"))
    else:
        (tmp_path / "a-file").write_text("")
        monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "a-file" / "sub" / "trust.key"))  # under a file
    main = trust_cli.main if command == "rlrun-trust" else eval_cli.main
    assert exit_status(main, ["--yes", str(folder)] if command == "rlrun-trust" else [str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{command}: error: the trust key" in err and signatures.KEY_ENV in err and "fix:" in err
    assert "Traceback" not in err and not (folder / "model.zip").exists()
