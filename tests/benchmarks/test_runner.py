"""``python -m benchmarks``: one runner with every benchmark of benchmarks/speed, scores and zoo registered."""

from __future__ import annotations

import importlib
from pathlib import Path

from benchmarks import __main__ as runner
from benchmarks import common

# Modules that are not benchmarks: a harness the start-up benchmarks run, the plain side of the overhead one, the
# Zoo pairs' measurements that the zoo benchmark uses.
HELPERS = {"speed.first_step", "speed.plain_sb3", "zoo.pairs"}


def test_every_benchmark_module_is_registered_once_and_importable() -> None:
    package = Path(runner.__file__).parent
    found = {
        f"{path.parent.name}.{path.stem}"
        for group in ("speed", "scores", "zoo")
        for path in (package / group).glob("*.py")
        if path.stem != "__init__"
    }
    registered = {module.removeprefix("benchmarks.") for module, _ in runner.SCRIPTS.values()}
    assert set(runner.NAMES) == set(runner.SCRIPTS) | set(runner.IN_PROCESS)
    assert len(runner.NAMES) == len(set(runner.NAMES))
    in_process = {"speed.startup", "speed.overhead", "speed.evaluation", "speed.eval_share"}
    in_process |= {"scores.time_to_solve", "zoo.speed"}
    assert found == registered | in_process | HELPERS
    for module in found:
        importlib.import_module(f"benchmarks.{module}")  # nothing runs at import time


def test_results_live_under_benchmarks_results() -> None:
    kept = {path.name for path in common.RESULTS.iterdir()}
    assert {"presets", "zoo_reproduction", "zoo"} <= kept
    beside_code = [p for p in Path(runner.__file__).parent.rglob("*") if p.suffix in {".json", ".csv", ".png", ".md"}]
    assert all(common.RESULTS in p.parents or ".zoo-venv" in p.parts for p in beside_code)


def test_pair_of_reads_the_preset_benchmarks_pair_file() -> None:
    assert common.pair_of("minigrid_empty_5x5_ppo") == ("minigrid_empty_5x5", "ppo")
    assert common.pair_of("fetchreach_her") == ("fetchreach", "her")
