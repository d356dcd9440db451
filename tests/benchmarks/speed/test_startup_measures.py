"""The start-up measures benchmark (benchmarks/speed/startup_measures.py) measures exactly the measures rlrun has."""

from __future__ import annotations

from benchmarks.speed import startup_measures
from rlrun.startup import bootstrap


def test_each_measure_is_turned_off_alone_and_all_together() -> None:
    variants = {**startup_measures.RUNS, **startup_measures.EACH, **startup_measures.SWEEPS}
    skipped = [extra[startup_measures.SKIP] for extra, _ in variants.values() if startup_measures.SKIP in extra]
    assert sorted(skipped) == sorted(bootstrap.MEASURES)  # every measure once, and no measure that is gone
    assert startup_measures.SWITCH == bootstrap.SWITCH
    switched_off = [name for name, (extra, _) in variants.items() if extra.get(startup_measures.SWITCH) == "0"]
    assert switched_off == ["off", "sweep off"]


def test_the_section_names_its_command_and_keeps_the_output() -> None:
    body = startup_measures.section("python -m benchmarks.speed.startup_measures --reps 1", "| on | ... |")
    assert body.startswith("### What each start-up measure buys")
    assert "`python -m benchmarks.speed.startup_measures --reps 1`" in body and "```\n| on | ... |\n```" in body
