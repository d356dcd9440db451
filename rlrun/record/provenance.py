"""Where a run, a sweep or a table came from: the command line, package versions and the git commits.

Two commits: the working folder's (what the user ran rlrun from) and rlrun's own code's (:func:`code_commit`: the
checkout it is imported from, or the one pip recorded when it installed rlrun from a git URL). A commit is read
from ``.git`` itself (no ``git`` subprocess), also in worktrees and with packed refs.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from importlib import metadata
from pathlib import Path

# run.json's "versions": key -> distribution name
RUN_PACKAGES = {
    "rlrun": "rlrun",
    "stable_baselines3": "stable-baselines3",
    "gymnasium": "gymnasium",
    "torch": "torch",
    "hydra": "hydra-core",
}
# and those of a run with algo.backend=jax
JAX_PACKAGES = {"sbx": "sbx-rl", "jax": "jax", "flax": "flax", "optax": "optax"}


def prog() -> str:
    """How the user started rlrun: ``python -m rlrun`` rather than a path to a module, or the script's name."""
    return "python -m rlrun" if sys.argv[0].endswith("__main__.py") else Path(sys.argv[0]).name


def command_line() -> str:
    """The command line as the user typed it."""
    return " ".join([prog(), *map(shlex.quote, sys.argv[1:])])


def requeued_command(command: str | None) -> str | None:
    """What a run's ``resumes[].command`` says when its job was started again inside the sweep that launched it:
    under SLURM, the sweep's command marked as requeued by SLURM, with the job's id (the job's own process is
    submitit's ``_submit.py``, which no person typed); elsewhere, the sweep's command."""
    job = os.environ.get("SLURM_JOB_ID")  # set by SLURM in every job's environment
    if command is None or job is None:
        return command
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    return f"{command}  # requeued by SLURM (job {f'{array}_{task}' if array and task else job})"


def package_version(dist: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def run_versions(jax: bool = False) -> dict[str, str | None]:
    """run.json's ``versions``; with ``jax``, SBX's and JAX's too."""
    packages = RUN_PACKAGES | (JAX_PACKAGES if jax else {})
    return {key: package_version(dist) for key, dist in packages.items()}


def _git_dir(folder: Path) -> Path | None:
    """``folder/.git`` as a folder (a worktree's or submodule's ``.git`` file points to it), or None."""
    dot_git = folder / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file() and (text := dot_git.read_text().strip()).startswith("gitdir:"):
        return (folder / text.removeprefix("gitdir:").strip()).resolve()
    return None


def _commit(git_dir: Path) -> str | None:
    """The commit ``HEAD`` names in ``git_dir``."""
    head = (git_dir / "HEAD").read_text().strip()
    if not head.startswith("ref:"):
        return head or None  # detached HEAD
    ref = head.removeprefix("ref:").strip()
    common = git_dir / (git_dir / "commondir").read_text().strip() if (git_dir / "commondir").is_file() else git_dir
    for folder in (git_dir, common):
        if (folder / ref).is_file():
            return (folder / ref).read_text().strip() or None
    packed = common / "packed-refs"
    lines = packed.read_text().splitlines() if packed.is_file() else []
    return next((line.split()[0] for line in lines if line.endswith(f" {ref}")), None)


def git_commit(start: Path, search_parents: bool = True) -> str | None:
    """The commit of the git repository holding ``start`` (only ``start`` itself without ``search_parents``)."""
    try:
        for folder in (start, *start.parents) if search_parents else (start,):
            git_dir = _git_dir(folder)
            if git_dir is not None:
                return _commit(git_dir)
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def run_commit() -> str | None:
    """The commit of the repository a run was started from (the working directory's), if any."""
    return git_commit(Path.cwd())


def source_commit() -> str | None:
    """The commit of the checkout rlrun itself is imported from; None for an installed package."""
    package = Path(__file__).resolve().parents[1]  # rlrun/, this file being rlrun/record/provenance.py
    return git_commit(package.parent, search_parents=False)


def installed_commit(dist: str = "rlrun") -> str | None:
    """The commit pip recorded when it installed ``dist`` from a git URL (``pip install git+https://...``: PEP 610's
    ``direct_url.json``, ``vcs_info.commit_id``); None for any other install."""
    try:
        text = metadata.distribution(dist).read_text("direct_url.json")
        info = json.loads(text) if text else None
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    vcs = info.get("vcs_info") if isinstance(info, dict) else None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    return commit if isinstance(commit, str) and commit else None


def code_commit() -> str | None:
    """The commit of the code that runs: rlrun's own checkout (a clone, an editable install), else the commit of
    the git URL rlrun was installed from; None for a wheel built elsewhere (its version names it then)."""
    return source_commit() or installed_commit()
