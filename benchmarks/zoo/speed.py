"""rlrun against RL Baselines3 Zoo, whole runs pair by pair (``benchmarks/zoo/pairs.py``) and the user-level figure.

The Zoo is installed into its own virtualenv, ``benchmarks/.zoo-venv`` (``benchmarks.common.ensure_zoo``), never
into rlrun's. Whole runs: the pairs at the Zoo's hyperparameters and budgets, three sides (the Zoo by default, the
Zoo at one torch thread, rlrun by default), three ratios; and the user-level figure (``--user-level``). The
measurements are kept in ``benchmarks/results/zoo/``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.common import (
    PYTHON,
    ZOO_PYTHON,
    ensure_zoo,
    provenance,
    run_process,
    table,
    versions,
)
from benchmarks.zoo import pairs

# What each side's environment holds in memory before training: the peak RSS of a process that only imports.
IMPORTS = {
    "zoo": ("import rl_zoo3.train", "the Zoo's `rl_zoo3.train`"),
    "sb3 (zoo's env)": ("import stable_baselines3", "`stable_baselines3` in the Zoo's environment (no tensorboard)"),
    "sb3 (rlrun's env)": ("import stable_baselines3", "`stable_baselines3` in rlrun's (with tensorboard)"),
    "rlrun": ("import rlrun.run.training, rlrun.cli.main", "rlrun's training modules, Hydra included"),
}


def import_peaks(work: Path) -> dict[str, float]:
    """Peak RSS (MB) of a process that only imports, in each side's environment (see ``IMPORTS``)."""
    peaks = {}
    for name, (code, _) in IMPORTS.items():
        python = str(ZOO_PYTHON) if "zoo" in name else PYTHON
        peaks[name] = run_process([python, "-c", code], work / "logs" / f"import-{name}.log".replace(" ", "_")).peak_mb
    return peaks


def memory_note(peaks: dict[str, float]) -> str:
    """Where peak memory comes from, in figures measured by this run."""
    measured = "; ".join(f"{IMPORTS[name][1]} {peak:.0f} MB" for name, peak in peaks.items())
    return (
        f"Peak memory of a process that only imports: {measured}. The rest of a run's peak is training: the model, "
        "the env copies, the rollout or replay buffer, and on rlrun's side the snapshots it writes."
    )


def _zoo_section(results: dict[str, dict], figure: dict | None, peaks: dict[str, float], quick: bool) -> str:
    command = "python -m benchmarks --only zoo --pairs NAME... --reps N [--user-level]"
    return "\n".join(
        [
            "## RL Zoo: the same training, whole runs, pair by pair",
            "",
            "**Quick run (tiny budgets, to prove the benchmark works; not the figures the goals are about).**"
            if quick
            else "",
            "The Zoo's hyperparameters and budgets on both sides: `python -m rl_zoo3.train --algo A --env E --seed 0`"
            " as the Zoo runs by default (torch's default threads, evaluation every 25,000 steps on 5 episodes,"
            " no checkpoints), the same with `--num-threads 1`, and `rlrun env=E algo=A` as rlrun runs by default"
            " (its preset is the Zoo's values; `~tuned +benchmark/zoo=<pair>` where rlrun's own preset is tuned"
            " for wall time; one torch thread, evaluation every 10,000 steps on 10 episodes, a 50-episode final"
            " evaluation, snapshots every 10,000 steps). Whole processes, the sides alternating, medians."
            " Ratios are rlrun's: wall time over the Zoo's default (`default`; its goal <= 1.0 applies where the"
            f" Zoo's default runs on one core, i.e. at most {pairs.ONE_CORE} CPU seconds per wall second; the"
            " Zoo's cores are in brackets), wall time over the Zoo's at one thread (`equal threads`, goal <= 0.95)"
            " and CPU seconds over the Zoo's default (`per CPU-second`, goal <= 0.7). `rlrun at zoo eval`: rlrun"
            f" with `{' '.join(pairs.ZOO_EVAL)}`, the Zoo's evaluation work, its wall time and its ratio to the"
            " Zoo's at one thread (measured for the pairs where it tells the cost of rlrun's evaluations).",
            "",
            table(pairs.HEADER, pairs.rows(results)),
            "",
            *(pairs.user_level_lines(figure) if figure else ["User level: not measured by this run."]),
            "",
            memory_note(peaks),
            "",
            "Each invocation measures the pairs named and keeps them in `benchmarks/pairs.json`; the table is"
            " written from all kept pairs (the reps and date of each in its last column).",
            provenance(command, max((r["reps"] for r in results.values()), default=0)),
            "The Zoo's environment: "
            f"{versions(str(ZOO_PYTHON), ('rl_zoo3', 'stable-baselines3', 'gymnasium', 'torch', 'minigrid'))}.",
        ]
    )


def run(reps: int, quick: bool, names: list[str] | None = None, user_level: bool = False) -> str:
    """The ``zoo`` section; ``names``: the Zoo pairs to measure now (default: all)."""
    ensure_zoo()
    with tempfile.TemporaryDirectory(prefix="rlrun-bench-") as tmp:
        work = Path(tmp)
        peaks = import_peaks(work)  # also the warm-up of both virtualenvs (bytecode compiled on first use)
        results = pairs.measure_pairs(list(pairs.PAIRS) if names is None else names, reps, quick, work)
        figure = pairs.user_level(work, quick) if user_level else None
        if figure is not None and not quick:
            pairs.USER_LEVEL_KEPT.write_text(json.dumps(figure, indent=1, sort_keys=True) + "\n")
        elif figure is None and pairs.USER_LEVEL_KEPT.exists() and not quick:
            figure = json.loads(pairs.USER_LEVEL_KEPT.read_text())
    return _zoo_section(results, figure, peaks, quick)
