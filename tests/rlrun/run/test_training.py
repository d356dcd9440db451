"""Real (tiny) training runs: the run-directory contract, reproducibility and one learning check."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import pytest
import torch
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.record.formats import EVAL_CSV_HEADER
from rlrun.run.training import train
from tests.rlrun.helpers import CONTRIB_PAIRS, PAIRS, compose_config
from tools.zoo_readme import is_generated

Tiny = Callable[..., DictConfig]

TUNED = Path(str(files("rlrun.conf"))) / "tuned"


def read_eval(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "eval.csv") as f:
        return list(csv.DictReader(f))


def tb_tags(run_dir: Path) -> set[str]:
    accumulator = EventAccumulator(str(run_dir / "tb"))
    accumulator.Reload()
    return set(accumulator.Tags()["scalars"])


@pytest.mark.parametrize(("env", "algo"), PAIRS + CONTRIB_PAIRS, ids=[f"{e}-{a}" for e, a in PAIRS + CONTRIB_PAIRS])
def test_tiny_run_writes_the_run_directory_contract(tiny_config: Tiny, tmp_path: Path, env: str, algo: str) -> None:
    # sb3-contrib's defaults, and SB3's where the pair's preset is the Zoo's (tools/zoo_presets.py: e.g. DQN's
    # train_freq of 256 leaves a tiny run no snapshot)
    zoo = TUNED / f"{env}_{algo}.yaml"
    contrib = ["~tuned"] if (env, algo) in CONTRIB_PAIRS or (zoo.exists() and is_generated(zoo)) else []
    cfg = tiny_config(f"env={env}", f"algo={algo}", *contrib)
    final = train(cfg, tmp_path, {"env": env, "algo": algo})

    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "completed"
    assert record["timesteps"] >= cfg.total_timesteps
    assert record["final"] == final and len(final["returns"]) == cfg.eval.final_episodes
    assert record["env"] == env and record["env_id"] == cfg.env.id and record["seed"] == cfg.seed
    assert len(record["config_hash"]) == 64 and record["versions"]["stable_baselines3"]
    assert OmegaConf.load(tmp_path / "config.yaml") == OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))

    assert (tmp_path / "eval.csv").read_text().startswith(EVAL_CSV_HEADER)
    rows = read_eval(tmp_path)
    assert [int(r["timesteps"]) for r in rows][:1] and all(r["mean_return"] for r in rows)
    assert "eval/mean_reward" in tb_tags(tmp_path)

    # plain SB3; HER's buffer needs the env to load, as SB3's docs say
    env = vec_envs.make_vec(cfg, 1, seed=0) if models.uses_her(cfg) else None
    model = get_class(cfg.algo._target_).load(tmp_path / "model.zip", env=env, device="cpu")
    assert model.num_timesteps == record["timesteps"]
    assert any((tmp_path / "snapshots").iterdir())


def test_success_rate_and_hparams_reach_csv_and_tensorboard(tiny_config: Tiny, tmp_path: Path) -> None:
    train(tiny_config("env=gridworld", "algo=ppo"), tmp_path)
    assert all(r["success_rate"] != "" for r in read_eval(tmp_path))
    assert {"eval/success_rate", "final/success_rate"} <= tb_tags(tmp_path)
    accumulator = EventAccumulator(str(tmp_path / "tb"))
    accumulator.Reload()
    hparams = accumulator.PluginTagToContent("hparams")  # TensorBoard's HParams tab reads these
    assert hparams and any(b"algo.n_steps" in content for content in hparams.values())


def test_env_without_success_leaves_the_column_empty(tiny_config: Tiny, tmp_path: Path) -> None:
    train(tiny_config("env=pendulum", "algo=ppo"), tmp_path)
    assert {r["success_rate"] for r in read_eval(tmp_path)} == {""}


def test_normalised_run_saves_vecnormalize(tiny_config: Tiny, tmp_path: Path) -> None:
    train(
        tiny_config("env=pendulum", "algo=ppo", "env.normalize.obs=true", "env.normalize.reward=true"),
        tmp_path,
    )
    assert (tmp_path / "vecnormalize.pkl").is_file()


def test_subprocess_vec_env_trains(tiny_config: Tiny, tmp_path: Path) -> None:
    train(tiny_config("env=gridworld", "algo=ppo", "env.n_envs=2", "env.vec_env=subproc"), tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "completed"


def test_same_seed_same_config_is_bit_identical(tiny_config: Tiny, tmp_path: Path) -> None:
    def run(folder: str) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        cfg = tiny_config("env=pointenv", "algo=sac", "seed=3")
        train(cfg, tmp_path / folder)
        model = get_class(cfg.algo._target_).load(tmp_path / folder / "model.zip", device="cpu")
        rows = [
            [r[k] for k in ("timesteps", "mean_return", "std_return", "success_rate")]
            for r in read_eval(tmp_path / folder)
        ]
        return model.policy.state_dict(), rows

    (params_a, rows_a), (params_b, rows_b) = run("a"), run("b")
    assert rows_a == rows_b and len(rows_a) >= 2
    assert params_a.keys() == params_b.keys()
    assert all(torch.equal(params_a[k], params_b[k]) for k in params_a)


def test_a_new_run_never_writes_over_another(tiny_config: Tiny, tmp_path: Path) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo")
    train(cfg, tmp_path)
    before = (tmp_path / "run.json").read_bytes()
    with pytest.raises(UserError, match="already holds a run"):
        train(cfg, tmp_path)
    assert (tmp_path / "run.json").read_bytes() == before


def test_failed_run_records_the_error(tiny_config: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stable_baselines3 import PPO

    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(PPO, "learn", explode)
    with pytest.raises(RuntimeError):
        train(tiny_config("env=gridworld", "algo=ppo"), tmp_path)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "failed" and "boom" in record["error"] and record["final"] is None


def test_ppo_learns_gridworld(tmp_path: Path) -> None:
    """The default experiment (the gridworld_ppo preset) solves GridWorld."""
    cfg = compose_config("env=gridworld", "algo=ppo", "progress_bar=false")
    final = train(cfg, tmp_path)
    assert final["success_rate"] >= 0.9


@pytest.mark.parametrize(("env", "algo"), [("gridworld", "ppo"), ("pointenv", "sac")])
def test_distribution_checks_are_off_unless_check_nan_and_change_nothing_trained(
    tiny_config: Tiny, tmp_path: Path, env: str, algo: str
) -> None:
    def run(check_nan: bool) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        cfg = tiny_config(f"env={env}", f"algo={algo}", f"check_nan={str(check_nan).lower()}")
        folder = tmp_path / str(check_nan)
        train(cfg, folder)
        assert torch.distributions.Distribution._validate_args is check_nan  # what configure_torch set
        model = get_class(cfg.algo._target_).load(folder / "model.zip", device="cpu")
        return model.policy.state_dict(), [list(r.values())[:4] for r in read_eval(folder)]

    (checked, checked_rows), (unchecked, unchecked_rows) = run(True), run(False)
    assert checked_rows == unchecked_rows and checked_rows
    assert all(torch.equal(checked[k], unchecked[k]) for k in checked)


ROUND_TRIP = 1  # the env copy rlrun.checks.resume_mode.decide builds for a run's resume mode
FIRST_STEP = 1  # the raw copy whose first reward the reward check reads (rlrun.make.vec_envs.first_step)


class BuildCounter:
    """Counts what a run builds: env copies (``gym.make`` calls, through rlrun's builder) and models."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.envs = self.models = self.loads = 0
        gym_make, make_model, load_model = vec_envs._gym_make, models.make_model, models.load_model

        def counted_gym_make(*args: object, **kwargs: object) -> object:
            self.envs += 1
            return gym_make(*args, **kwargs)

        def counted_make_model(*args: object, **kwargs: object) -> object:
            self.models += 1
            return make_model(*args, **kwargs)

        def counted_load_model(*args: object, **kwargs: object) -> object:
            self.loads += 1
            return load_model(*args, **kwargs)

        monkeypatch.setattr(vec_envs, "_gym_make", counted_gym_make)
        monkeypatch.setattr(models, "make_model", counted_make_model)
        monkeypatch.setattr(models, "load_model", counted_load_model)


@pytest.mark.parametrize(
    ("env", "algo", "copies"), [("gridworld", "ppo", 3), ("pointgoal", "her", 1)], ids=["ppo", "her"]
)
def test_a_run_builds_its_envs_and_model_once(
    tiny_config: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str, algo: str, copies: int
) -> None:
    cfg = tiny_config(f"env={env}", f"algo={algo}", f"env.n_envs={copies}", "eval.n_envs=2")
    counter = BuildCounter(monkeypatch)
    train(cfg, tmp_path / "run", {"env": env, "algo": algo})
    # the training copies and the evaluation copies, each made once, and the one copy the resume-mode round trip
    # steps and pickles (rlrun.checks.resume_mode: never a training copy, whose episodes it would change), the raw
    # copy stepped once for the reward check; no other probe env, no throwaway model
    assert (counter.envs, counter.models) == (copies + 2 + ROUND_TRIP + FIRST_STEP, 1)


def test_a_resume_builds_its_envs_once_and_loads_the_snapshot_model(
    tiny_config: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlrun.run.training import resume
    from tests.rlrun.resume_helpers import Crash, crash_at

    cfg = tiny_config("env=gridworld", "algo=ppo", "env.n_envs=2", "eval.n_envs=2")
    with monkeypatch.context() as patch:
        crash_at(patch, cfg.total_timesteps - 8)
        with pytest.raises(Crash):
            train(cfg, tmp_path / "run", {"env": "gridworld", "algo": "ppo"})
    counter = BuildCounter(monkeypatch)
    resume(tmp_path / "run", "false")
    # a resume checks its recorded mode against a new round trip (one copy of its own), as a new run does
    assert (counter.envs, counter.models, counter.loads) == (2 + 2 + ROUND_TRIP, 0, 1)
