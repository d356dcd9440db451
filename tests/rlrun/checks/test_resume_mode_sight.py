"""The resume-mode line of ``rlrun-check`` says what its round trip cannot see (issue 53): an env that keeps state
outside its instance (a class-level counter) round-trips, yet two copies of it do not repeat each other; the line
is then information that the round trip's ``exact`` goes only as far as it sees (rlrun/checks/resume_mode.py)."""

from __future__ import annotations

from rlrun.checks import resume_mode
from rlrun.checks.env_checks import FAIL, INFO, PASS, Result
from rlrun.run.check_suite import run_checks
from tests.rlrun.checks import package_envs
from tests.rlrun.helpers import compose_check


def test_state_outside_the_instance_makes_the_exact_line_information() -> None:
    packages = f"env.packages=[{package_envs.MODULE}]"
    cfg = compose_check("env=gym", "env.id=pkgtest/ClassCounter-v0", packages, "steps=200")
    results = {result.name: result for result in run_checks(cfg, with_algo=False)}
    assert results["seeded determinism"].status == FAIL
    mode = results["resume mode"]
    assert mode.status == INFO and mode.detail.startswith("exact") and "as far as the round trip sees" in mode.detail
    assert "state kept outside the env's instance" in mode.notes[0]


def test_an_exact_line_stays_a_pass_where_the_env_repeats_itself() -> None:
    exact = Result("resume mode", PASS, "exact: the env stack round-trips")
    assert resume_mode.with_determinism(exact, Result("seeded determinism", PASS)) is exact
