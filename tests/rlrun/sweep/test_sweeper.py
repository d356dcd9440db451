"""``hydra/sweeper=rlrun``'s seam with Hydra's internals (:mod:`rlrun.sweep.sweeper`'s docstring): each part of
Hydra's basic sweeper it relies on exists with the shape it expects, in the installed Hydra."""

from __future__ import annotations

import inspect
from pathlib import Path

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.plugins.launcher import Launcher

from tests import forked_commands

REPO = Path(__file__).resolve().parents[3]


# Instances are made in a fresh interpreter: Hydra's plugin scan (run by other tests of a worker) executes
# basic_sweeper.py again, after which the class RlrunSweeper extends is no longer the one its module names.
INSTANCES = """
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from rlrun.sweep.sweeper import RlrunSweeper

sweeper = RlrunSweeper(max_batch_size=2, params={"seed": "0,1"})
assert isinstance(sweeper, BasicSweeper)
assert sweeper.max_batch_size == 2 and sweeper.params == {"seed": "0,1"}, "BasicSweeper keeps max_batch_size, params"
for name in ("hydra_context", "config", "launcher"):
    assert getattr(sweeper, name) is None, f"BasicSweeper.{name} is no longer set before setup()"
assert RlrunSweeper().params == {}, "BasicSweeper no longer turns params=None into {}: sweep() reads .items()"
"""


def test_the_basic_sweeper_takes_and_keeps_what_rlrun_passes() -> None:
    assert list(inspect.signature(BasicSweeper.__init__).parameters)[1:] == ["max_batch_size", "params"]
    assert list(inspect.signature(BasicSweeper.setup).parameters)[1:] == ["hydra_context", "task_function", "config"]
    result = forked_commands.run(["-c", INSTANCES], cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr


def test_split_arguments_is_the_cartesian_product_in_batches() -> None:
    overrides = OverridesParser.create().parse_overrides(["seed=0,1", "algo=ppo", "env=a,b"])
    product = [[f"seed={s}", "algo=ppo", f"env={e}"] for s in (0, 1) for e in ("a", "b")]
    assert BasicSweeper.split_arguments(overrides, None) == [product]
    assert BasicSweeper.split_arguments(overrides, 3) == [product[:3], product[3:]]


def test_the_basic_launcher_is_a_launcher() -> None:
    assert issubclass(BasicLauncher, Launcher)
    assert list(inspect.signature(BasicLauncher.launch).parameters)[1:] == ["job_overrides", "initial_job_idx"]
