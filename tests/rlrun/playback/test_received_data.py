"""``rlrun-eval`` of a received folder reads it as data: its env config and wrappers are the ones installed here,
only its plain values are taken, and a folder naming code of its own is refused before any of it runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
import yaml
from omegaconf import open_dict

from rlrun.config.errors import UserError
from rlrun.playback.loading import load_run
from rlrun.record import signatures
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

# A module that leaves a mark when imported: what a folder naming it would run
MARKING_MODULE = "from pathlib import Path\nPath(__file__).with_name('imported').write_text('')\n"


def received(tmp_path: Path, *overrides: str, policy_kwargs: dict | None = None) -> Path:
    """A finished tiny run of this user's, copied as a received folder (its run manifest removed)."""
    cfg = shrink(compose_config(*overrides), 64)
    with open_dict(cfg):
        cfg.eval.n_envs = 1
        cfg.snapshot.every = 10**6
        if policy_kwargs:
            cfg.algo.policy_kwargs.update(policy_kwargs)
    train(cfg, tmp_path / "own")
    run_dir = tmp_path / "received"
    shutil.copytree(tmp_path / "own", run_dir)
    (run_dir / signatures.RUN_MANIFEST).unlink()
    return run_dir


def rlrun_eval(run_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "1"], cwd=cwd, timeout=300)


def edit_config(run_dir: Path, edit: dict) -> None:
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    for dotted, value in edit.items():
        *parents, leaf = dotted.split(".")
        node = cfg
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))


@pytest.fixture(scope="module")
def gridworld(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return received(tmp_path_factory.mktemp("gridworld"), "env=gridworld", "algo=ppo")


ATTACKS = {
    # gymnasium.register as a "wrapper", then an env.id that makes os.system run the command in env.kwargs
    "register-entry-point": lambda marker: {
        "wrappers": {
            "evil": {"_target_": "gymnasium.register", "id": "Evil-v0", "entry_point": "os:system"},
        },
        "env.id": "Evil-v0",
        "env.kwargs": {"command": f"touch {marker}"},
    },
    "module-prefix": lambda marker: {"env.id": "marking:GridWorld-v0"},
    "packages": lambda marker: {"env.packages": ["marking"]},
    "family-wrapper": lambda marker: {"env.wrappers": {"own": {"_target_": "marking.Wrap", "_partial_": True}}},
    "wrapper-of-its-own": lambda marker: {"wrappers": {"own": {"_target_": "marking.Wrap", "_partial_": True}}},
    "getter-path": lambda marker: {"algo.policy_kwargs": {"activation_fn": {"_target_": GETTER, "path": "marking.X"}}},
    "algo-class": lambda marker: {"algo._target_": "marking.Algo"},
}
GETTER = "hydra.utils.get_class"


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_received_folder_naming_code_is_refused_and_nothing_of_it_runs(
    gridworld: Path, tmp_path: Path, attack: str
) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    shutil.copytree(gridworld, run_dir)
    (tmp_path / "marking.py").write_text(MARKING_MODULE)  # importable from the working directory
    edit_config(run_dir, ATTACKS[attack](marker))
    done = rlrun_eval(run_dir, tmp_path)
    assert not marker.exists() and not (tmp_path / "imported").exists()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    # env.packages is not a key of this rlrun's schema: refused as a config it cannot read, not as code
    assert f"rlrun-trust {run_dir}" in done.stderr or "'env.packages'" in done.stderr


def test_a_received_folder_with_a_plain_value_the_schema_refuses_is_refused(gridworld: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(gridworld, run_dir)
    edit_config(run_dir, {"env.n_envs": "many"})
    with pytest.raises(UserError, match="n_envs"):
        load_run(run_dir, untrusted="data")


def test_an_rlrun_env_evaluates_as_data_with_its_installed_wrappers(gridworld: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(gridworld, run_dir)
    edit_config(run_dir, {"wrappers": {"flatten": {"_target_": "gymnasium.wrappers.ClipAction"}}})
    done = rlrun_eval(run_dir, tmp_path)  # the folder's _target_ of flatten differs from the installed one
    assert done.returncode == 2 and "wrappers.flatten._target_" in done.stderr, done.stderr
    (run_dir / "config.yaml").write_text((gridworld / "config.yaml").read_text())
    done = rlrun_eval(run_dir, tmp_path)
    assert done.returncode == 0 and "over 1 episode," in done.stdout and "read as data only" in done.stderr


def test_a_zoo_preset_evaluates_as_data(tmp_path: Path) -> None:
    kwargs = {
        "log_std_init": -3.29,
        "ortho_init": False,
        "activation_fn": {"_target_": GETTER, "path": "torch.nn.ReLU"},
    }
    run_dir = received(tmp_path, "env=mountaincar_continuous", "algo=ppo", policy_kwargs=kwargs)
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["algo"]["use_sde"]  # the Zoo's preset, composed
    model, env = load_run(run_dir, untrusted="data")
    own, own_env = load_run(tmp_path / "own")
    assert model.policy.activation_fn is torch.nn.ReLU and model.use_sde
    for name, tensor in own.policy.state_dict().items():
        assert torch.equal(tensor, model.policy.state_dict()[name]), name
    env.close()
    own_env.close()
    done = rlrun_eval(run_dir, tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_third_party_id_of_env_gym_evaluates_as_data(tmp_path: Path) -> None:
    run_dir = received(tmp_path, "env=gym", "env.id=Acrobot-v1", "algo=a2c")
    done = rlrun_eval(run_dir, tmp_path)
    assert done.returncode == 0 and "read as data only" in done.stderr, done.stderr


def _special_files(run_dir: Path, damage: str) -> None:
    """Turn ``run_dir``'s model files into what a received folder may hold instead: links to ``/dev/zero`` (a file
    without end) or FIFOs (a file no one writes)."""
    snapshots = sorted((run_dir / "snapshots").glob("step-*"))
    if damage == "model.zip linked to /dev/zero":
        (run_dir / "model.zip").unlink()
        (run_dir / "model.zip").symlink_to("/dev/zero")
        return
    (run_dir / "model.zip").unlink()  # the snapshots are read instead
    for snapshot in snapshots:
        if damage == "snapshot manifest a FIFO":
            (snapshot / "manifest.json").unlink()
            os.mkfifo(snapshot / "manifest.json")
        else:  # a file its manifest lists
            (snapshot / "model.zip").unlink()
            (snapshot / "model.zip").symlink_to("/dev/zero")


SPECIAL = {
    "model.zip linked to /dev/zero": "model.zip is a symbolic link",
    "snapshot manifest a FIFO": "has no model to evaluate",
    "manifest entry linked to /dev/zero": "model.zip is a symbolic link",
}


@pytest.mark.parametrize("trusted", [False, True], ids=["received", "own"])
@pytest.mark.parametrize("damage", SPECIAL)
def test_links_to_devices_and_fifos_are_refused_at_once(
    gridworld: Path, tmp_path: Path, damage: str, trusted: bool
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(gridworld.parent / "own" if trusted else gridworld, run_dir, symlinks=True)
    _special_files(run_dir, damage)
    done = forked_commands.run(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "1"], cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert SPECIAL[damage] in done.stderr, done.stderr
