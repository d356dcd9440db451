"""Checks of the command line before Hydra's entry runs (rlrun/cli/entry.py): wrapper names, output folders and
benchmark parts.

In-process: the command-line runs of both (exit statuses, messages, nothing created) are in
tests/rlrun/config/test_errors.py and tests/rlrun/cli/test_check.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlrun.cli import entry
from rlrun.cli.command_line import CommandLine
from rlrun.config.errors import UserError
from tests import forked_commands

MY_WRAPPER = """\
# A wrapper config of the user's, found through --config-dir or hydra.searchpath
my_scale:
  _target_: rlrun.envs.wrappers.ScaleReward
  _partial_: true
  scale: 2.0
"""


@pytest.mark.parametrize(
    ("overrides", "unknown"),
    [
        (["wrappers=[relative_position,flaten]"], "'flaten'"),
        (["+wrappers=[flaten]"], "'flaten'"),
        (["-m", "wrappers=[flatten],[flatten,scale_rewrd]"], "'scale_rewrd'"),  # a multirun sweep of lists
    ],
    ids=["list", "append", "sweep"],
)
def test_wrapper_names_are_read_as_hydra_parses_them(overrides: list[str], unknown: str) -> None:
    with pytest.raises(UserError, match=f"unknown wrapper {unknown}"):
        entry.checked(overrides, "config")


def test_an_override_hydras_grammar_cannot_read_is_said_so() -> None:
    with pytest.raises(UserError, match="cannot read the overrides"):
        entry.checked(["wrappers=[unclosed"], "config")


def test_known_wrappers_pass() -> None:
    entry.checked(["env=gridworld", "wrappers=[relative_position,flatten]"], "config")


def test_a_misspelt_wrapper_gets_the_list_and_the_closest_name() -> None:
    with pytest.raises(UserError) as caught:
        entry.checked(["wrappers=[relative_position,flaten]"], "config")
    error = caught.value
    assert error.status == 2  # a user mistake, answered by rlrun
    assert error.problem.startswith("unknown wrapper 'flaten' (did you mean 'flatten'?); available wrappers: ")
    assert (
        "atari, clip_action, flatten, frame_stack, minigrid_flat, minigrid_image, relative_position, rescale_action, "
        "scale_reward" in error.problem
    )
    assert error.fix == "wrappers=[relative_position,flatten]"


def test_a_name_close_to_nothing_gets_the_list() -> None:
    with pytest.raises(UserError) as caught:
        entry.checked(["wrappers=[zzz]"], "config")
    assert caught.value.problem.startswith("unknown wrapper 'zzz'; available wrappers: atari, clip_action")
    assert "--config-dir" in str(caught.value.fix)


@pytest.mark.parametrize("how", ["--config-dir", "hydra.searchpath"])
def test_the_users_own_wrappers_count(tmp_path: Path, how: str) -> None:
    (tmp_path / "myconf" / "wrappers").mkdir(parents=True)
    (tmp_path / "myconf" / "wrappers" / "my_scale.yaml").write_text(MY_WRAPPER)
    where = ["--config-dir", str(tmp_path / "myconf")] if how == "--config-dir" else []
    where += [f"hydra.searchpath=[file://{tmp_path / 'myconf'}]"] if how == "hydra.searchpath" else []
    entry.checked([*where, "wrappers=[flatten,my_scale]"], "config")
    with pytest.raises(UserError, match=r"'my_scal' \(did you mean 'my_scale'\?\)") as caught:
        entry.checked([*where, "wrappers=[my_scal]"], "config")
    assert "my_scale" in caught.value.problem.split("available wrappers: ")[1]


def test_rlrun_checks_own_config_is_used_for_rlrun_check() -> None:
    with pytest.raises(UserError, match="did you mean 'scale_reward'"):
        entry.checked(["wrappers=[scale_rewards]"], "check")


@pytest.mark.parametrize("where", ["under-a-file", "the-file-itself"])
def test_an_output_folder_that_cannot_be_made(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("the user's")
    target = blocker / "run" if where == "under-a-file" else blocker
    for key in ("hydra.run.dir", "hydra.sweep.dir"):
        with pytest.raises(UserError) as caught:
            entry.refuse_output_folders(CommandLine.parse([f"{key}={target}"]))
        assert caught.value.problem == f"{key}={target} cannot be written: {blocker} is a file, not a folder"
        assert caught.value.status == 2 and caught.value.fix
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_writable_output_folder_passes_and_nothing_is_created(tmp_path: Path) -> None:
    entry.refuse_output_folders(CommandLine.parse([f"hydra.run.dir={tmp_path / 'new' / 'run'}", "seed=1"]))
    entry.refuse_output_folders(CommandLine.parse([f"hydra.run.dir={tmp_path}"]))
    entry.refuse_output_folders(CommandLine.parse(["hydra.run.dir=outputs/${now:%Y}"]))  # interpolations: Hydra's
    assert list(tmp_path.iterdir()) == []


def test_a_benchmark_part_that_is_not_there_is_refused_before_hydra_builds_the_sweep(tmp_path: Path) -> None:
    entry.checked(["+benchmark=zoo", "benchmark.part=2"], "config")  # a part there: passes
    entry.checked(["+benchmark=zoo", "benchmark.part=all"], "config")
    with pytest.raises(UserError) as caught:
        entry.checked(["+benchmark=zoo", "benchmark.part=7"], "config")
    assert caught.value.problem == "benchmark.part=7 is not a part of benchmark=zoo"
    assert caught.value.fix == "use one of: 1, 2, 3, all (conf/benchmark/zoo.yaml)"
    with pytest.raises(UserError, match="benchmark=presets has no parts"):
        entry.checked(["+benchmark=presets", "benchmark.part=1"], "config")
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    cli = ["-m", "rlrun", "-m", "+benchmark=zoo", "benchmark.part=7"]
    result = forked_commands.run(cli, cwd=tmp_path, env=env, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "benchmark.part=7 is not a part of benchmark=zoo" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_quoted_value_with_an_equals_sign_is_read_as_hydra_reads_it(tmp_path: Path) -> None:
    """The old check split ``key=value`` by hand and looked for a folder named ``'a=b`` (quote included)."""
    (tmp_path / "a=b").write_text("the user's")
    with pytest.raises(UserError, match="is a file, not a folder"):
        entry.refuse_output_folders(CommandLine.parse([f"hydra.run.dir='{tmp_path}/a=b/run'"]))
    assert CommandLine.parse(["resume='runs/x y'"]).value("resume") == "runs/x y"


def test_each_value_of_a_swept_benchmark_part_is_checked() -> None:
    """The old check split the raw string and took ``1,2`` for one part's name."""
    entry.checked(["-m", "+benchmark=zoo", "benchmark.part=1,2"], "config")
    with pytest.raises(UserError, match="benchmark.part=7 is not a part of benchmark=zoo"):
        entry.checked(["-m", "+benchmark=zoo", "benchmark.part=1,7"], "config")
