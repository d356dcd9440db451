"""Folder names of runs and sweeps (rlrun/config/resolvers.py), as ``conf/config.yaml`` resolves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.core.hydra_config import HydraConfig

from rlrun.config import resolvers
from rlrun.config.errors import UserError
from tests.rlrun.helpers import assert_name_refused_before_anything


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["env=gridworld", "algo=ppo", "seed=3"], "gridworld-ppo/seed-3"),
        (["algo.n_steps=64", "progress_bar=false", "eval.every=5", "sweep=x"], "gridworld-ppo/algo.n_steps-64/seed-3"),
        (["wrappers=[flatten,scale_reward]"], "gridworld-ppo/wrappers-flatten+scale_reward/seed-3"),
        (["env.id=mypkg:my/Env-v0", "~tuned"], "gridworld-ppo/env.id-mypkg+my+Env-v0_no-tuned/seed-3"),
        (
            ["+algo.gamma=0.9", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
            "gridworld-ppo/algo.gamma-0.9/seed-3",
        ),
        (
            ["algo.policy_kwargs={net_arch:[16]}", "snapshot.keep=1"],
            "gridworld-ppo/algo.policy_kwargs-net_arch+16/seed-3",
        ),
    ],
    ids=["plain", "non-training-keys-left-out", "list", "module-id-and-deletion", "append-and-hydra", "dict"],
)
def test_sweep_subdir_names_the_training_overrides(overrides: list[str], expected: str) -> None:
    folder = resolvers.sweep_subdir("gridworld", "ppo", overrides, 3)
    assert folder == expected
    assert "=" not in folder and "," not in folder


def test_a_long_name_ends_in_a_hash_of_the_full_one() -> None:
    a = resolvers.safe_name("algo.policy_kwargs=" + "x" * 300 + "a")
    b = resolvers.safe_name("algo.policy_kwargs=" + "x" * 300 + "b")
    assert len(a) <= 120 and len(b) <= 120 and a != b


def test_sweep_dir_is_absolute_and_fixed_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    unnamed = resolvers.sweep_dir(None)
    assert Path(unnamed).is_absolute() and Path(unnamed).parent == tmp_path / "outputs" / "sweeps"
    assert resolvers.sweep_dir(None) == unnamed
    assert resolvers.sweep_dir("my sweep 1") == str(tmp_path / "outputs" / "sweeps" / "my sweep 1")  # as given


def test_config_yaml_resolves_the_same_folders() -> None:
    overrides = ["algo=dqn", "seed=2", "algo.gamma=0.9", "progress_bar=false", "sweep=demo"]
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)  # what Hydra does for each job, so ${hydra:...} resolves
    assert cfg.hydra.sweep.subdir == "gridworld-dqn/algo.gamma-0.9/seed-2"
    assert cfg.hydra.sweep.dir == str(Path("outputs/sweeps/demo").absolute())


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "it is empty"),
        (".", "not a folder of its own"),
        ("..", "not a folder of its own"),
        (".hidden", "starts with a dot"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("a\0b", "control characters"),
        ("two\nlines", "control characters"),
        ("my sweep=1,2", "folder names never contain = ,"),
        ("cafe\u0301", "composed form (NFC)"),
        ("x" * 256, "at most 255"),
        ("\u65e5" * 86, "258 bytes"),
        ("bad\udcffbytes", "not valid UTF-8"),
        (True, "is a bool, not a name"),
        (1.5, "is a float, not a name"),
        (["a", "b"], "is a list, not a name"),
    ],
    ids=lambda value: repr(value)[:20],
)
def test_a_name_that_is_no_folder_of_its_own_is_refused_with_the_rule(name: object, reason: str) -> None:
    with pytest.raises(UserError) as refused:
        resolvers.sweep_dir(name)
    assert reason in refused.value.problem and refused.value.status == 2
    assert refused.value.fix is not None and "sweep=" in refused.value.fix
    if isinstance(name, str):
        assert "a name is one folder name" in refused.value.fix
        suggested = refused.value.fix.rsplit("e.g. sweep=", 1)[1].strip("\"'")
        assert resolvers.folder_name("sweep", suggested) == suggested  # the suggestion is itself accepted


@pytest.mark.parametrize("name", ["日本", "中文", "ünïcødé-日本", "my sweep", "v1.0_final+x@y%z", "x" * 255, 2026])
def test_an_accepted_name_is_its_folder_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: object) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolvers.sweep_dir(name) == str(tmp_path / "outputs" / "sweeps" / str(name))


def test_different_names_never_share_a_folder() -> None:
    names = ["日本", "中文", "ünïcødé-日本", "n+c+d-", "my sweep", "my+sweep", "my-sweep", "A", "a"]
    assert len({resolvers.sweep_dir(name) for name in names}) == len(names)


def test_tune_study_names_follow_the_same_rule() -> None:
    assert resolvers.folder_name("tune.study", "中文") == "中文"
    with pytest.raises(UserError, match=r"tune.study='\.\.' cannot name a folder") as refused:
        resolvers.folder_name("tune.study", "..")
    assert refused.value.fix is not None and refused.value.fix.endswith("e.g. tune.study=my-study")


def test_config_yaml_keeps_a_unicode_sweep_name() -> None:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=["sweep='日本'"], return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    assert cfg.hydra.sweep.dir == str(Path("outputs/sweeps/日本").absolute())


@pytest.mark.parametrize("name", ["..", ".hidden", "a/b", "''"])
def test_a_sweep_with_a_refused_name_creates_nothing(tmp_path: Path, name: str) -> None:
    assert_name_refused_before_anything(tmp_path, "rlrun", "-m", "env=gridworld", "seed=0,1", f"sweep={name}")


@pytest.mark.parametrize(
    ("env", "env_id", "expected"),
    [
        ("gym", "Acrobot-v1", "acrobot-v1"),
        ("atari", "ALE/Pong-v5", "ale-pong-v5"),
        ("robotics", "gymnasium_robotics:FetchReach-v4", "fetchreach-v4"),
        ("mujoco", "Pusher-v5", "pusher-v5"),
        ("minigrid", "MiniGrid-DoorKey-8x8-v0", "minigrid-doorkey-8x8-v0"),
        ("box2d", "CarRacing-v3", "carracing-v3"),
        ("gym", "tests.rlrun.broken_envs:broken/Reset-v0", "broken-reset-v0"),
        ("acrobot", "Acrobot-v1", "acrobot"),  # a named config keeps its name
        ("gridworld", "rlrun/GridWorld-v0", "gridworld"),
        ("gym", None, "gym"),  # no id yet: the config's name
        ("gym", "", "gym"),
    ],
    ids=lambda value: str(value),
)
def test_env_name_is_the_id_for_configs_that_take_any_id(env: str, env_id: str | None, expected: str) -> None:
    assert resolvers.env_name(env, env_id) == expected


def test_which_configs_take_any_id_is_read_from_their_files() -> None:
    """``id: ???`` in the file decides (conf/env/), not a list of names; a config rlrun does not ship is named."""
    from importlib.resources import files

    folder = files("rlrun.conf").joinpath("env")
    blanks = sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml") and "\nid: ???" in p.read_text())
    assert "gym" in blanks
    assert all(resolvers.takes_any_id(name) for name in blanks)
    assert not resolvers.takes_any_id("cartpole") and not resolvers.takes_any_id("my_own_env")


@pytest.mark.parametrize(
    ("env", "overrides", "expected"),
    [
        ("gym", ["env=gym", "env.id=Acrobot-v1", "algo=ppo"], "acrobot-v1-ppo/seed-3"),
        ("atari", ["env=atari", "env.id=ALE/Pong-v5", "algo.n_steps=64"], "ale-pong-v5-ppo/algo.n_steps-64/seed-3"),
        ("cartpole", ["env=cartpole", "env.id=CartPole-v0"], "cartpole-ppo/env.id-CartPole-v0/seed-3"),
    ],
    ids=["gym", "family-with-override", "named-config-keeps-env.id"],
)
def test_sweep_subdir_is_named_after_the_id(env: str, overrides: list[str], expected: str) -> None:
    env_id = overrides[1].partition("=")[2]
    assert resolvers.sweep_subdir(env, "ppo", overrides, 3, env_id) == expected


def test_config_yaml_names_run_and_sweep_folders_after_the_id() -> None:
    overrides = ["env=gym", "env.id=Acrobot-v1", "algo=ppo", "seed=1", "sweep=demo"]
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    assert cfg.hydra.run.dir.startswith("outputs/runs/acrobot-v1-ppo/")
    assert cfg.hydra.sweep.subdir == "acrobot-v1-ppo/seed-1"
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=["env=gym"], return_hydra_config=True)  # no id: Hydra's run.dir resolves
    HydraConfig.instance().set_config(cfg)
    assert cfg.hydra.run.dir.startswith("outputs/runs/gym-ppo/")


def test_env_threshold_changes_neither_the_hash_nor_the_folder() -> None:
    """A solved level only tables read (env.threshold): pendulum.yaml gained one without changing its runs' hash."""
    from rlrun.config.keys import config_hash
    from tests.rlrun.helpers import compose_config

    assert resolvers.sweep_subdir("pendulum", "sac", ["env.threshold=-150"], 0) == "pendulum-sac/seed-0"
    assert compose_config("env=pendulum").env.threshold == -200
    assert config_hash(compose_config("env=pendulum")) == config_hash(
        compose_config("env=pendulum", "env.threshold=null")
    )


def test_a_benchmark_part_is_found_as_a_number_or_a_name() -> None:
    parts = {"1": "a,b", "all": "a,b,c"}
    assert resolvers.benchmark_part(parts, 1) == "a,b"
    assert resolvers.benchmark_part(parts, "all") == "a,b,c"
    with pytest.raises(UserError, match="benchmark.part=2 is not a part"):
        resolvers.benchmark_part(parts, 2)


def test_the_zoo_benchmarks_part_picks_the_sweeps_pairs_and_names_its_sweep() -> None:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=["+benchmark=zoo", "benchmark.part=1"], return_hydra_config=True)
    assert cfg.hydra.sweeper.params["+benchmark/zoo_pair"] == "mountaincar_a2c,acrobot_a2c"
    assert cfg.sweep == "zoo-1"
    # the benchmark keys change no training: not in the job folders' names
    assert resolvers.sweep_subdir(
        "mountaincar", "a2c", ["+benchmark/zoo_pair=mountaincar_a2c", "benchmark.part=1"], 0
    ) == ("mountaincar-a2c/seed-0")
