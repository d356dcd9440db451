"""``algo.backend=jax``: SBX's class for the six algorithms it has, refusals with the fix for the rest, a torch
activation as its flax function, XLA's threads, and no JAX at all in a torch run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from omegaconf import open_dict

from rlrun.checks import preflight, rules
from rlrun.config.errors import UserError
from rlrun.config.keys import config_hash
from rlrun.make import jax_models, models, vec_envs
from tests.rlrun.helpers import TINY_RUN, compose_config

REPO = Path(__file__).resolve().parents[3]
RELU = "{_target_:hydra.utils.get_class,path:torch.nn.ReLU}"
SBX_PAIRS = [
    ("pendulum", "sac", "sbx.sac.sac.SAC"),
    ("pendulum", "td3", "sbx.td3.td3.TD3"),
    ("pendulum", "tqc", "sbx.tqc.tqc.TQC"),
    ("pendulum", "crossq", "sbx.crossq.crossq.CrossQ"),
    ("cartpole", "dqn", "sbx.dqn.dqn.DQN"),
    ("cartpole", "ppo", "sbx.ppo.ppo.PPO"),
]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_torch_run_imports_no_jax(tmp_path: Path) -> None:
    """The default backend trains without importing JAX, flax, optax or SBX (their import alone costs seconds)."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from rlrun.run.training import train
        from tests.rlrun.helpers import TINY_RUN, compose_config
        train(compose_config(*TINY_RUN), {str(tmp_path / "run")!r})
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "flax", "optax", "sbx")))
        """
    )
    result = _run("-c", script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["backend"] == "torch"


@pytest.mark.parametrize(("env", "algo", "target"), SBX_PAIRS, ids=[algo for _, algo, _ in SBX_PAIRS])
def test_the_six_algorithms_build_on_sbx(env: str, algo: str, target: str) -> None:
    cfg = compose_config(
        f"env={env}", f"algo={algo}", "algo.backend=jax", "~tuned", "algo.policy_kwargs={net_arch:[8]}"
    )
    preflight.config_checks(cfg)
    # every argument of the algo config accepted (SB3's defaults SBX lacks left out)
    preflight.algorithm_checks(cfg, models.model_class(cfg))
    venv = vec_envs.make_vec(cfg, 1, 0)
    try:
        model = models.make_model(cfg, venv)
    finally:
        venv.close()
    assert f"{type(model).__module__}.{type(model).__name__}" == target
    assert models.algo_class(cfg).__module__.startswith(("stable_baselines3", "sb3_contrib"))  # what rules check


@pytest.mark.parametrize("algo", ["a2c", "trpo", "qrdqn", "ars", "recurrent_ppo"])
def test_an_algorithm_sbx_lacks_is_refused_with_the_fix(algo: str) -> None:
    cfg = compose_config("env=cartpole", f"algo={algo}", "algo.backend=jax", "~tuned")
    with pytest.raises(UserError) as raised:
        preflight.config_checks(cfg)
    assert "SBX (Stable Baselines Jax) has no" in raised.value.problem
    assert "algo.backend=torch" in str(raised.value.fix)


def test_refusals_exit_2_in_rlrun_and_rlrun_check_before_anything_is_written(tmp_path: Path) -> None:
    for args in (["-m", "rlrun"], ["-m", "rlrun.cli.check"]):
        result = _run(*args, "env=cartpole", "algo=a2c", "algo.backend=jax", cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "error: algo.backend=jax: SBX (Stable Baselines Jax) has no A2C" in result.stderr
        assert "fix: train A2C with algo.backend=torch" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []
    result = _run("-m", "rlrun", "env=cartpole", "algo=ppo", "algo.backend=tensorflow", cwd=tmp_path)
    assert result.returncode == 2 and "algo.backend=tensorflow is not one of torch, jax" in result.stderr


@pytest.mark.parametrize(("env", "algo", "her"), [("pointgoal", "ppo", False), ("gridworld", "dqn", True)])
def test_dict_observations_are_refused_for_ppo_and_dqn(env: str, algo: str, her: bool) -> None:
    cfg = compose_config(f"env={env}", f"algo={algo}", "algo.backend=jax", "~tuned")
    probe = vec_envs.make_env(cfg)
    try:
        sbx_cls = models.model_class(cfg)
        found = jax_models.fit_problems(cfg, sbx_cls, probe.observation_space, cfg.env.id, "MultiInputPolicy", her)
        assert found == rules.fit_problems(cfg, probe, models.algo_class(cfg), her, sbx_cls)[-len(found) :]
    finally:
        probe.close()
    (problem, fix), *_ = found
    assert f"SBX's {algo.upper()} (algo.backend=jax) has no MultiInputPolicy" in problem
    assert "use algo.backend=torch" in fix
    assert ("HER needs Dict observations" in problem) is her


def test_a_torch_activation_trains_as_its_flax_function(caplog: pytest.LogCaptureFixture) -> None:
    import flax.linen

    cfg = compose_config(
        "env=pendulum",
        "algo=ppo",
        "algo.backend=jax",
        "~tuned",
        f"algo.policy_kwargs={{net_arch:[8],activation_fn:{RELU}}}",
    )
    preflight.config_checks(cfg)
    preflight.algorithm_checks(cfg, models.model_class(cfg))
    venv = vec_envs.make_vec(cfg, 1, 0)
    try:
        with caplog.at_level(logging.INFO, logger="rlrun"):
            model = models.make_model(cfg, venv)
    finally:
        venv.close()
    assert model.policy.activation_fn is flax.linen.relu
    notes = [r.getMessage() for r in caplog.records if "trains as" in r.getMessage()]
    assert notes == [
        "algo.policy_kwargs.activation_fn=torch.nn.ReLU trains as flax.linen.relu (algo.backend=jax: flax networks)"
    ]


def test_a_torch_class_sbx_cannot_take_is_refused_naming_the_key() -> None:
    gelu = "{_target_:hydra.utils.get_class,path:torch.nn.GELU}"
    cfg = compose_config(
        "env=pendulum", "algo=sac", "algo.backend=jax", "~tuned", f"algo.policy_kwargs={{activation_fn:{gelu}}}"
    )
    with pytest.raises(UserError) as raised:
        preflight.config_checks(cfg)
        preflight.algorithm_checks(cfg, models.model_class(cfg))
    assert raised.value.problem.startswith("algo.policy_kwargs.activation_fn=torch.nn.GELU is a torch class")
    assert "flax.linen.relu" in str(raised.value.fix)


def test_an_sb3_argument_sbx_lacks_is_left_out_at_its_default_and_refused_otherwise() -> None:
    cfg = compose_config("env=pendulum", "algo=sac", "algo.backend=jax", "~tuned")
    sbx_cls = models.model_class(cfg)
    assert "optimize_memory_usage" in cfg.algo and "optimize_memory_usage" not in jax_models.arguments(cfg, sbx_cls)
    with open_dict(cfg):
        cfg.algo.target_update_interval = 2
    (problem, fix), *_ = jax_models.problems(cfg, sbx_cls)
    assert problem == "algo.target_update_interval=2: SBX's SAC (algo.backend=jax) has no target_update_interval"
    assert fix == "leave algo.target_update_interval at SB3's default (1), or use algo.backend=torch"


def test_xla_threads_follow_torch_threads_after_the_users_own_flags() -> None:
    assert jax_models.xla_flags(1, "") == jax_models.ONE_THREAD
    mine = "--xla_force_host_platform_device_count=1"
    assert jax_models.xla_flags(1, mine) == f"{mine} {jax_models.ONE_THREAD}"
    assert jax_models.xla_flags(1, f"{mine} {jax_models.ONE_THREAD}") == f"{mine} {jax_models.ONE_THREAD}"  # once
    assert jax_models.xla_flags(2, mine) == f"{mine} intra_op_parallelism_threads=2"


def test_xla_flags_are_set_before_jax_is_imported(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        from rlrun.make import models
        from tests.rlrun.helpers import compose_config
        cfg = compose_config("env=pendulum", "algo=sac", "algo.backend=jax")
        assert "jax" not in sys.modules
        models.model_class(cfg)
        import jax
        jax.devices()  # XLA starts with the flags: an unknown one would abort here
        print(os.environ["XLA_FLAGS"])
        """
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == f"--xla_force_host_platform_device_count=1 {jax_models.ONE_THREAD}"


def test_the_backend_is_in_the_config_hash_and_torch_hashes_as_before() -> None:
    torch_cfg = compose_config(*TINY_RUN)
    jax_cfg = compose_config(*TINY_RUN, "algo.backend=jax")
    without = compose_config(*TINY_RUN)
    with open_dict(without):
        del without.algo["backend"]  # a run made before the key
    assert config_hash(torch_cfg) == config_hash(without) != config_hash(jax_cfg)


def _dqn_on_jax(*overrides: str) -> object:
    cfg = compose_config("env=cartpole", "algo=dqn", "algo.backend=jax", "~tuned", *overrides)
    preflight.config_checks(cfg)
    preflight.algorithm_checks(cfg, models.model_class(cfg))
    venv = vec_envs.make_vec(cfg, 1, 0)
    try:
        return models.make_model(cfg, venv)
    finally:
        venv.close()


@pytest.mark.parametrize("norm", [10, 0.5])
def test_dqn_on_jax_clips_its_gradients_by_global_norm_as_sb3_does(
    norm: float, caplog: pytest.LogCaptureFixture
) -> None:
    """SB3's DQN clips at algo.max_grad_norm (10 by default); SBX's has no such argument and clipped nothing."""
    import jax
    import optax

    sgd = "{optimizer_class:{_target_:hydra.utils.get_method,path:optax.sgd},net_arch:[8]}"  # an update = -lr * grad
    with caplog.at_level(logging.INFO, logger="rlrun"):
        model = _dqn_on_jax(f"algo.max_grad_norm={norm}", "algo.learning_rate=1.0", f"algo.policy_kwargs={sgd}")
    state = model.policy.qf_state  # type: ignore[attr-defined]
    grads = jax.tree.map(lambda p: p * 0 + 100.0, state.params)  # a global norm far above the clipping
    updates, _ = state.tx.update(grads, state.tx.init(state.params), state.params)
    assert float(optax.tree.norm(updates)) == pytest.approx(norm, rel=1e-5)
    assert any(f"algo.max_grad_norm={norm} clips DQN's gradients" in r.getMessage() for r in caplog.records)


def test_a_learning_rate_schedule_sbx_dqn_would_not_follow_is_refused() -> None:
    schedule = "{_target_:stable_baselines3.common.utils.LinearSchedule,start:1e-3,end:0,end_fraction:1.0}"
    cfg = compose_config("env=cartpole", "algo=dqn", "algo.backend=jax", "~tuned", f"algo.learning_rate={schedule}")
    (problem, fix), *_ = jax_models.problems(cfg, models.model_class(cfg))
    assert problem.startswith("algo.learning_rate is a schedule: SBX's DQN (algo.backend=jax) keeps its first value")
    assert "algo.backend=torch" in fix
