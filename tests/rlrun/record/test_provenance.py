"""Where a run came from (rlrun/record/provenance.py): the command line as typed, package versions, and the git
commit read from ``.git`` itself: branches, packed refs, a detached HEAD, worktrees."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from rlrun.record import provenance

SHA, OTHER = "1" * 40, "2" * 40


def repository(folder: Path, head: str = "ref: refs/heads/main") -> Path:
    """A ``.git`` folder with only what the commit is read from."""
    git_dir = folder / ".git"
    (git_dir / "refs/heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text(head + "\n")
    return git_dir


def test_the_branch_head_names_from_the_repository_or_any_folder_below(tmp_path: Path) -> None:
    git_dir = repository(tmp_path)
    (git_dir / "refs/heads/main").write_text(SHA + "\n")
    (tmp_path / "a/b").mkdir(parents=True)
    assert provenance.git_commit(tmp_path) == provenance.git_commit(tmp_path / "a/b") == SHA
    assert provenance.git_commit(tmp_path / "a/b", search_parents=False) is None


def test_packed_refs_and_a_detached_head(tmp_path: Path) -> None:
    git_dir = repository(tmp_path / "packed")
    (git_dir / "packed-refs").write_text(f"# pack-refs with: peeled\n{OTHER} refs/heads/other\n{SHA} refs/heads/main\n")
    repository(tmp_path / "detached", head=SHA)
    assert provenance.git_commit(tmp_path / "packed") == SHA
    assert provenance.git_commit(tmp_path / "detached") == SHA


def test_a_worktree_reads_its_own_head_and_the_shared_refs(tmp_path: Path) -> None:
    main = repository(tmp_path / "main")
    (main / "refs/heads/feature").write_text(OTHER + "\n")
    worktree_dir = main / "worktrees/wt"
    worktree_dir.mkdir(parents=True)
    (worktree_dir / "HEAD").write_text("ref: refs/heads/feature\n")
    (worktree_dir / "commondir").write_text("../..\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt/.git").write_text(f"gitdir: {worktree_dir}\n")
    assert provenance.git_commit(tmp_path / "wt") == OTHER


def test_no_repository_or_a_broken_one_gives_none(tmp_path: Path) -> None:
    assert provenance.git_commit(tmp_path, search_parents=False) is None
    (tmp_path / ".git").mkdir()  # no HEAD
    assert provenance.git_commit(tmp_path) is None


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["/site/rlrun/__main__.py", "env=gridworld", "seed=0"], "python -m rlrun env=gridworld seed=0"),
        (
            ["/venv/bin/rlrun", "-m", "algo.policy_kwargs={net_arch:[64, 64]}"],
            "rlrun -m 'algo.policy_kwargs={net_arch:[64, 64]}'",
        ),
    ],
    ids=["python-m", "console-script"],
)
def test_the_command_line_as_typed(monkeypatch: pytest.MonkeyPatch, argv: list[str], line: str) -> None:
    monkeypatch.setattr(sys, "argv", argv)
    assert provenance.command_line() == line


def test_versions_of_the_run_packages() -> None:
    versions = provenance.run_versions()
    assert list(versions) == ["rlrun", "stable_baselines3", "gymnasium", "torch", "hydra"]
    assert versions["rlrun"] == metadata.version("rlrun") and versions["hydra"] == metadata.version("hydra-core")
    assert provenance.package_version("rlrun-no-such-distribution") is None


def test_a_job_requeued_by_slurm_names_the_sweeps_command_and_the_requeue(monkeypatch: pytest.MonkeyPatch) -> None:
    command = "rlrun -m env=gridworld seed=0,1 hydra/launcher=slurm"
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(name, raising=False)
    assert provenance.requeued_command(command) == command  # not under SLURM: the sweep's command as it is
    monkeypatch.setenv("SLURM_JOB_ID", "13")
    assert provenance.requeued_command(command) == f"{command}  # requeued by SLURM (job 13)"
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "12")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    assert provenance.requeued_command(command) == f"{command}  # requeued by SLURM (job 12_1)"  # as squeue names it
    assert provenance.requeued_command(None) is None
