"""The RL Zoo preset converter (tools/zoo_presets.py): the committed presets are what it writes from the installed
rl_zoo3, each composes with its env and algo configs and passes rlrun's config checks, docs/presets.md's table
marks each preset, and the conversion of single values (schedules, Python strings, normalisation, action noise)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from hydra.utils import instantiate
from omegaconf import OmegaConf, open_dict

from rlrun.checks import preflight
from rlrun.make import models, vec_envs
from tests.rlrun.helpers import compose_config
from tools import zoo_presets, zoo_readme
from tools.zoo_values import (
    LINEAR_SCHEDULE,
    Unconvertible,
    action_noise,
    kwargs_value,
    normalize,
    python_value,
    schedule,
    yaml_scalar,
    yaml_text,
)

TUNED = zoo_presets.CONF / "tuned"
GENERATED = sorted(path for path in TUNED.glob("*.yaml") if zoo_readme.is_generated(path))


def pair(path: Path) -> tuple[str, str]:
    """The env and algo a preset is for, as its first comment names them."""
    found = re.search(r"Preset for env=(\S+) algo=(\S+):", path.read_text())
    assert found, f"{path.name} does not name its pair"
    return found[1], found[2]


def test_the_committed_presets_are_what_the_converter_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert zoo_presets.main(["--out", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    skipped = {line.split()[1] for line in report.splitlines() if line.startswith("skipped: ")}
    for key in (
        "default",
        "AntBulletEnv-v0",
        "CarRacing-v3",
        "PandaReach-v1",
        "HumanoidStandup-v4",
        "PendulumNoVel-v1",
    ):
        assert key in skipped, f"the report does not list the Zoo entry {key} it skips"
    assert "skipped: BipedalWalkerHardcore-v3 (a2c.yml, " in report  # with the files that hold it and why
    written = {path.name: path.read_bytes() for path in tmp_path.glob("*.yaml")}
    assert len(written) >= 100  # about 140 pairs among the env and algo configs rlrun ships
    committed = {path.name: path.read_bytes() for path in GENERATED}
    stale = sorted(set(committed) - set(written))
    missing = sorted(set(written) - set(committed))
    differ = sorted(name for name in set(written) & set(committed) if written[name] != committed[name])
    fix = "run `python -m tools.zoo_presets --presets-page` and commit conf/tuned/ and docs/presets.md"
    assert (stale, missing, differ) == ([], [], []), fix
    for path in TUNED.glob("*.yaml"):  # verified presets are never replaced by a Zoo one
        if not zoo_readme.is_generated(path):
            assert path.name not in written


@pytest.mark.parametrize("path", GENERATED, ids=[path.stem for path in GENERATED])
def test_every_generated_preset_composes_and_passes_the_config_checks(path: Path) -> None:
    env, algo = pair(path)
    cfg = compose_config(f"env={env}", f"algo={algo}")
    preset = yaml.safe_load(path.read_text())
    assert cfg.total_timesteps == preset["total_timesteps"]  # applied as the pair's preset
    for key, value in preset.get("algo", {}).items():
        assert OmegaConf.to_container(cfg.algo, resolve=True)[key] == value
    preflight.config_checks(cfg)
    preflight.algorithm_checks(cfg, models.model_class(cfg))


# One preset for each kind of converted value that only building the model exercises.
BUILT = {
    "mountaincar_continuous_td3": "Ornstein-Uhlenbeck action noise of numpy arrays",
    "halfcheetah_ppo": "activation_fn=nn.ReLU in policy_kwargs",
    "pong_a2c": "optimizer_class=RMSpropTFLike",
    "cartpole_a2c": "plain values on a Discrete env",
    "lunarlander_continuous_sac": "a lin_ learning rate",
}


@pytest.mark.parametrize("name", list(BUILT), ids=list(BUILT))
def test_converted_objects_build_the_model(name: str) -> None:
    env, algo = pair(TUNED / f"{name}.yaml")
    cfg = compose_config(f"env={env}", f"algo={algo}")
    with open_dict(cfg):
        if "buffer_size" in cfg.algo:
            cfg.algo.buffer_size = 100  # the Zoo's 1M transitions would be allocated
    venv = vec_envs.make_vec(cfg, cfg.env.n_envs, 0)
    try:
        model = models.make_model(cfg, venv)
    finally:
        venv.close()
    kwargs = yaml.safe_load((TUNED / f"{name}.yaml").read_text())["algo"].get("policy_kwargs", {})
    if "activation_fn" in kwargs:
        assert model.policy.activation_fn is torch.nn.ReLU
    if "optimizer_class" in kwargs:
        assert type(model.policy.optimizer).__name__ == "RMSpropTFLike"
    noise = getattr(model, "action_noise", None)
    if noise is not None:
        assert np.asarray(noise()).shape == venv.action_space.shape
    if isinstance(cfg.algo.learning_rate, dict) or OmegaConf.is_dict(cfg.algo.learning_rate):
        assert model.lr_schedule(1.0) == pytest.approx(cfg.algo.learning_rate.start)
        assert model.lr_schedule(0.0) == pytest.approx(0.0)


def test_the_presets_page_marks_every_preset() -> None:
    readme = (zoo_presets.REPO / "docs" / "presets.md").read_text()
    rows = {found[1]: found[2] for found in re.finditer(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|", readme, re.M)}
    for path in TUNED.glob("*.yaml"):
        mark = zoo_readme.status_of(path)
        assert (mark == zoo_readme.ZOO) == zoo_readme.is_generated(path)  # a hand-written preset is tuned here
        assert rows.get(path.stem, "").strip() == mark, f"docs/presets.md's table: {path.stem} should say {mark}"


def test_lin_schedules_become_sb3_linear_schedules() -> None:
    node = schedule("lin_7.3e-4")
    assert node == {"_target_": LINEAR_SCHEDULE, "start": 7.3e-4, "end": 0.0, "end_fraction": 1.0}
    made = instantiate(node)
    assert made(1.0) == pytest.approx(7.3e-4) and made(0.5) == pytest.approx(3.65e-4) and made(0.0) == 0.0
    assert schedule(0.2) == 0.2 and schedule("auto") == "auto"
    with pytest.raises(Unconvertible, match="lin_"):
        schedule("lin_fast")


def test_policy_kwargs_strings_are_parsed_never_run() -> None:
    text = "dict(log_std_init=-2,\n ortho_init=False, activation_fn=nn.GELU, net_arch=dict(pi=[256], vf=[]))"
    assert kwargs_value(text) == {
        "log_std_init": -2,
        "ortho_init": False,
        "activation_fn": {"_target_": "hydra.utils.get_class", "path": "torch.nn.GELU"},
        "net_arch": {"pi": [256], "vf": []},
    }
    assert instantiate(kwargs_value("dict(activation_fn=nn.ReLU)"))["activation_fn"] is torch.nn.ReLU
    optimizer = kwargs_value("dict(optimizer_class=RMSpropTFLike, optimizer_kwargs=dict(eps=1e-5))")
    assert instantiate(optimizer)["optimizer_class"].__name__ == "RMSpropTFLike"
    assert optimizer["optimizer_kwargs"] == {"eps": 1e-5}
    assert kwargs_value({"net_arch": [64]}) == {"net_arch": [64]}  # a YAML mapping stays as it is
    for code in ("__import__('os').system('true')", "dict(x=open('f'))", "dict(**other)", "[1, 2]", "dict(x="):
        with pytest.raises(Unconvertible):
            kwargs_value(code)


def test_normalize_in_its_three_forms() -> None:
    assert normalize(True) == {"obs": True, "reward": True}  # VecNormalize's defaults
    assert normalize(False) == {"obs": False, "reward": False}
    assert normalize("{'norm_obs': False, 'norm_reward': True}") == {"obs": False, "reward": True}
    assert normalize("dict(norm_obs=True, norm_reward=False)") == {"obs": True, "reward": False}
    with pytest.raises(Unconvertible, match="clip_obs"):
        normalize("dict(norm_obs=True, clip_obs=5.0)")


def test_action_noise_is_sized_from_the_action_space() -> None:
    normal = action_noise("normal", 0.1, 3)
    assert normal["mean"] == [0.0, 0.0, 0.0] and normal["sigma"] == [0.1, 0.1, 0.1]
    assert instantiate(normal, _convert_="all")().shape == (3,)
    ou = instantiate(OmegaConf.create(action_noise("ornstein-uhlenbeck", 0.5, 2)), _convert_="all")
    assert ou().shape == (2,) and np.all(ou._sigma == 0.5)
    with pytest.raises(Unconvertible, match="noise_type"):
        action_noise("uniform", 0.1, 1)


def test_yaml_values_read_back_the_same() -> None:
    tree = {"a": {"b": 1e-5, "c": 2.0633e-05, "d": [64, 64], "e": "auto", "f": "yes", "g": None, "h": {}}, "i": 1000000}
    text = "\n".join(yaml_text(tree, {"a.b": "a comment"}))
    assert "b: 1.0e-05  # a comment" in text
    assert yaml.safe_load(text) == tree
    assert OmegaConf.to_container(OmegaConf.create(text)) == tree
    assert yaml_scalar(-2) == "-2" and yaml_scalar(True) == "true"
    assert python_value("-3.67") == -3.67


def test_env_wrappers_become_wrapper_entries_and_the_rest_is_listed(tmp_path: Path) -> None:
    entry = {
        "n_timesteps": 1000.0,
        "env_wrapper": ["sb3_contrib.common.wrappers.TimeFeatureWrapper", {"rl_zoo3.wrappers.HistoryWrapper": {}}],
        "callback": "rl_zoo3.callbacks.ParallelTrainCallback",
        "learning_rate": "lin_1e-3",
        "buffer_size": 2e4,  # a whole float for an int argument
    }
    pendulum = next(env for env in zoo_presets.env_configs(zoo_presets.CONF) if env.name == "pendulum")
    with zoo_presets.composer() as compose:
        preset = zoo_presets.Converter(zoo_presets.CONF, compose).convert(
            "sac.yml", "Pendulum-v1", entry, pendulum, "sac"
        )
    assert [item.split(":")[0] for item in preset.not_converted] == ["env_wrapper", "callback"]
    assert "# Not converted: callback: 'rl_zoo3.callbacks.ParallelTrainCallback'" in preset.text
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "zoo_test.yaml").write_text(preset.text)
    search = f"hydra.searchpath=[file://{tmp_path}]"
    cfg = compose_config("env=pendulum", "algo=sac", search, "tuned=zoo_test", "wrappers=[clip_action]")
    assert cfg.algo.buffer_size == 20000 and cfg.total_timesteps == 1000
    assert list(cfg.wrappers) == ["clip_action", "time_feature_wrapper"]  # the preset's after the command line's
    env = vec_envs.make_env(cfg)
    assert type(env).__name__ == "TimeFeatureWrapper" and env.observation_space.shape == (4,)  # Pendulum's 3 + time


def test_verified_presets_are_kept_and_stale_generated_ones_removed(tmp_path: Path) -> None:
    tuned, out = tmp_path / "tuned", tmp_path / "out"
    tuned.mkdir()
    out.mkdir()
    (tuned / "pendulum_td3.yaml").write_text("# @package _global_\n# Preset for env=pendulum algo=td3, tuned here.\n")
    (out / "gone_ppo.yaml").write_text(f"# @package _global_\n# {zoo_readme.MARKER}\n")
    generated = f"# @package _global_\n# {zoo_readme.MARKER}\ntotal_timesteps: 5\n"
    presets = [zoo_presets.Preset("pendulum_td3", generated), zoo_presets.Preset("cartpole_a2c", generated)]
    report: list[str] = []
    written = zoo_presets.write(presets, out, tuned, report)
    assert [path.name for path in written] == ["cartpole_a2c.yaml"]
    assert sorted(path.name for path in out.iterdir()) == ["cartpole_a2c.yaml"]  # gone_ppo removed
    assert any(line.startswith("kept: verified preset pendulum_td3.yaml") for line in report)


SAMPLED = [path for path in GENERATED if pair(path)[0].startswith(("minigrid_", "pong", "breakout"))]


@pytest.mark.parametrize("path", SAMPLED, ids=[path.stem for path in SAMPLED])
def test_converted_atari_and_minigrid_presets_evaluate_with_sampled_actions_as_the_zoo(path: Path) -> None:
    env, algo = pair(path)
    assert compose_config(f"env={env}", f"algo={algo}").eval.deterministic is False


def test_every_atari_and_minigrid_env_config_has_its_converted_presets_among_the_sampled() -> None:
    families = {p.stem for p in (zoo_presets.CONF / "env").glob("*.yaml") if "extra: minigrid" in p.read_text()}
    families |= {"pong", "breakout"}
    assert {path for path in GENERATED if pair(path)[0] in families} == set(SAMPLED)


@pytest.mark.parametrize("path", sorted(TUNED.glob("ant_*.yaml")), ids=lambda path: path.stem)
def test_ant_presets_build_the_27_dimensional_observation_of_ant_v4(path: Path) -> None:
    env, algo = pair(path)
    assert "include_cfrc_ext_in_observation: false" in path.read_text()
    probe = vec_envs.make_env(compose_config(f"env={env}", f"algo={algo}"))
    assert probe.observation_space.shape == (27,)
    probe.close()


@pytest.mark.parametrize("path", sorted(TUNED.glob("humanoid_*.yaml")), ids=lambda path: path.stem)
def test_humanoid_presets_say_they_are_tuned_for_v4s_observation(path: Path) -> None:
    header = " ".join(line.lstrip("# ") for line in path.read_text().splitlines() if line.startswith("#"))
    assert "tuned for v4's observation, not re-verified on v5" in header
