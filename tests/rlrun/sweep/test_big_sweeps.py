"""Big sweeps (rlrun.sweep.templates, rlrun.sweep.size): Hydra composes one config per shape, not one per job,
and the result is Hydra's own; the plan's size is printed before anything is composed, and a sweep above
CONFIRM_ABOVE jobs is asked about on a terminal and refused without one unless sweep_yes=true."""

from __future__ import annotations

import os
import pty
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from rlrun.config.keys import config_hash
from rlrun.sweep.size import CONFIRM_ABOVE
from rlrun.sweep.templates import Templates
from tests import forked_commands

BASE = ["env=gridworld", "algo=ppo"]


@pytest.fixture(scope="module")
def hydra_compose() -> Iterator[object]:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        yield lambda overrides: compose("config", overrides=overrides, return_hydra_config=True)


def task(cfg: DictConfig) -> dict:
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    container.pop("hydra", None)
    return container


def test_a_thousand_seeds_are_composed_once(hydra_compose) -> None:
    templates = Templates(hydra_compose, OverridesParser.create().parse_overrides)
    configs = [templates.config([*BASE, f"seed={seed}"]) for seed in range(1000)]
    assert templates.compositions == 1
    assert [c.task.seed for c in configs] == list(range(1000)) and configs[0].choices["tuned"] == "gridworld_ppo"
    for seed in (0, 1, 999):  # what Hydra itself composes for them
        assert task(configs[seed].task) == task(hydra_compose([*BASE, f"seed={seed}"]))


@pytest.mark.parametrize(
    "values",
    [
        ["algo.learning_rate=0.001", "algo.learning_rate=3e-4"],
        ["algo.n_steps=64", "algo.n_steps=32"],
        ["env.n_envs=2", "env.n_envs=4"],
        ["progress_bar=false", "progress_bar=true"],
    ],
    ids=["float", "int-in-preset", "env-int", "choice-string"],
)
def test_copies_equal_hydras_own_composition(hydra_compose, values: list[str]) -> None:
    templates = Templates(hydra_compose, OverridesParser.create().parse_overrides)
    jobs = [[*BASE, value, f"seed={seed}"] for value in values for seed in (0, 1)]
    for overrides in jobs:
        made, hydra = templates.config(overrides).task, hydra_compose(overrides)
        assert task(made) == task(hydra) and config_hash(made) == config_hash(
            OmegaConf.masked_copy(hydra, list(task(hydra)))
        )
    assert templates.compositions == 1


def test_group_choices_and_added_keys_are_composed_by_hydra(hydra_compose) -> None:
    templates = Templates(hydra_compose, OverridesParser.create().parse_overrides)
    for overrides in (["env=gridworld", "algo=ppo"], ["env=gridworld", "algo=dqn"], [*BASE, "+env.kwargs.size=4"]):
        assert task(templates.config(overrides).task) == task(hydra_compose(overrides))
    assert templates.compositions == 3


def sweep_command(*args: str) -> list[str]:
    return ["-m", "rlrun", "-m", *BASE, "seed=range(1000)", "sweep=big", *args]


def test_a_big_sweep_prints_its_size_and_is_refused_without_a_terminal(tmp_path: Path) -> None:
    result = forked_commands.run(sweep_command(), cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "1000 jobs planned" in result.stdout
    assert f"a sweep of 1000 jobs is more than {CONFIRM_ABOVE}" in result.stderr
    assert "fix: sweep_yes=true" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "outputs" / "sweeps" / "big").exists()


def test_a_big_sweep_asks_on_a_terminal(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    process = forked_commands.Popen(sweep_command(), cwd=tmp_path, stdin=terminal, stdout=terminal, stderr=terminal)
    os.close(terminal)
    seen = b""
    while b"start it? [y/N]" not in seen:
        chunk = os.read(controller, 4096)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    os.write(controller, b"n\n")
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the other side closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    assert process.wait(timeout=120) == 2, seen.decode(errors="replace")
    assert b"was not confirmed" in seen and b"1000 jobs planned" in seen
    assert not (tmp_path / "outputs" / "sweeps" / "big").exists()
