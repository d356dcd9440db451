"""The parts of ``--help`` that come from the configs themselves, for the ``hydra.help`` templates in ``conf/``.

Registered as the resolvers ``rlrun.config_groups`` (each config group in one line: a long group is counted,
with the command that lists it) and ``rlrun.commands`` (every console command, one line each), so the
help of ``rlrun``, ``rlrun-check`` and ``rlrun-tune`` fits a screen and never goes stale.
"""

from __future__ import annotations

from importlib.resources import files

# Every console command (pyproject.toml's [project.scripts]) and what it does, in one line.
COMMANDS = (
    ("rlrun", "train one run; -m: a sweep of runs (resumable); resume=<run folder>: continue a stopped run"),
    ("rlrun-envs", "list the env configs, their ids and extras (--presets: the tuned presets)"),
    ("rlrun-check", "check an env and algorithm before training (the same overrides as rlrun)"),
    ("rlrun-eval", "evaluate a saved run, show its episodes or record a video"),
    ("rlrun-runs", "list runs, sweeps' jobs and studies' seeds: status, steps, scores, the command that continues"),
    ("rlrun-table", "benchmark tables and plots of runs and sweeps (IQM, bootstrap intervals)"),
    ("rlrun-tune", "tune hyperparameters with Optuna, then re-validate the best on fresh seeds"),
    ("rlrun-track", "send what runs could not send to MLflow or W&B, or import runs trained without"),
    ("rlrun-trust", "trust run folders from elsewhere, so they may be resumed and evaluated"),
)
# The groups a user picks from: what picking means, and what to say instead of the options when they do not fit
# on one line (``{n}``: how many there are; ``{first}``: the first few).
GROUPS = (
    ("env", "", "{first}, ... ({n} in all: rlrun-envs lists them)"),
    ("algo", "", "{first}, ... ({n} in all)"),
    ("wrappers", "a list, in order (wrappers=[a,b]): ", "{first}, ... ({n} in all)"),
    ("logger", "a list (logger=[tensorboard,mlflow]): ", "{first}, ... ({n} in all)"),
    ("tuned", "", "{n} presets, applied for their env+algo pair (~tuned: none); rlrun-envs --presets lists them"),
    ("search_space", "rlrun-tune's: ", "{first}, ... ({n} in all)"),
    ("benchmark", "+benchmark=NAME, a sweep of preset pairs: ", "{first}, ... ({n} in all)"),
)
_WIDTH = 110  # characters per line


def commands() -> str:
    """One line per console command."""
    return "\n".join(f"  {name:<12} {what}" for name, what in COMMANDS)


def _in_short(head: str, options: list[str], summary: str) -> str:
    """``summary`` with as many of the first ``options`` as fit in the line."""
    first: list[str] = []
    for option in options:
        if len(head + summary.format(n=len(options), first=", ".join([*first, option]))) > _WIDTH:
            break
        first.append(option)
    return head + summary.format(n=len(options), first=", ".join(first))


def config_groups() -> str:
    """One line per config group: its options, or (too many for a line) the first few, their count and the
    command that lists them."""
    lines = []
    for group, meaning, summary in GROUPS:
        options = _options(group)
        if not options:
            continue
        head = f"  {group:<12} {meaning}"
        listed = head + ", ".join(options)
        lines.append(listed if len(listed) <= _WIDTH else _in_short(head, options, summary))
    return "\n".join(lines)


def _options(group: str) -> list[str]:
    """The group's options as Hydra sees them (a --config-dir of the user's included); outside Hydra's run, the
    files rlrun ships."""
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        return list(GlobalHydra.instance().config_loader().get_group_options(group))
    folder = files("rlrun.conf").joinpath(group)
    if not folder.is_dir():
        return []
    return sorted(e.name.removesuffix(".yaml") for e in folder.iterdir() if e.name.endswith(".yaml"))
