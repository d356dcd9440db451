"""Received run folders run no code unless the user says so: a folder whose signatures do not verify under this
user's trust key is refused before anything of it is unpickled or instantiated; ``rlrun-trust`` signs it."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from stable_baselines3.common.policies import MultiInputActorCriticPolicy
from stable_baselines3.common.vec_env import VecNormalize

from rlrun.cli import trust
from rlrun.config.errors import UserError
from rlrun.playback.loading import load_run
from rlrun.record import signatures
from rlrun.run import snapshots
from rlrun.run.resume_state import load_target
from rlrun.run.training import resume, train
from tests.rlrun.helpers import cli, status
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.resume_helpers import interrupted

OLD = Path(__file__).resolve().parents[2] / "fixtures" / "aaa907b"


class CreatesFile:
    """Unpickling this creates ``path``: what a crafted pickle could do instead."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def finished(run_dir: Path, *overrides: str) -> Path:
    """A completed GridWorld PPO run of this user's (with ``overrides``)."""
    train(config("env=gridworld", "algo=ppo", *overrides), run_dir)
    return run_dir


@pytest.mark.parametrize("signature", ["dropped", "kept"])
def test_a_crafted_pickle_under_a_recomputed_manifest_is_refused_and_never_runs(tmp_path: Path, signature: str) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    newest = interrupted(run_dir)
    (newest / snapshots.STATE).write_bytes(pickle.dumps(CreatesFile(marker)))
    data = snapshots.manifest(newest)  # recomputed as anyone can, without the key
    data["files"][snapshots.STATE] = signatures.sha256(newest / snapshots.STATE)
    if signature == "dropped":
        data.pop("signature")
    (newest / snapshots.MANIFEST).write_text(json.dumps(data))
    assert snapshots.is_complete(newest)  # the checksums alone would let it load
    with pytest.raises(UserError, match="not trusted") as refused:
        resume(run_dir, progress_bar="false")
    assert f"rlrun-trust {run_dir}" in str(refused.value) and "state.pkl" in str(refused.value)
    with pytest.raises(UserError, match="not trusted"):
        load_run(run_dir, "latest")
    done = cli(["-m", "rlrun", f"resume={run_dir}"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "is not trusted" in done.stderr and "rlrun-trust" in done.stderr and "Traceback" not in done.stderr
    done = cli(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "1"], tmp_path)  # needs no pickle: data only
    assert done.returncode == 0 and "not trusted: read as data only" in done.stderr, done.stderr
    assert not marker.exists()
    assert status(run_dir) == "failed"  # the crash's record, untouched by the refusals


def test_a_config_changed_after_signing_is_refused_before_anything_is_instantiated(tmp_path: Path) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    interrupted(run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    cfg["wrappers"] = {"evil": {"_target_": "builtins.open", "file": str(marker), "mode": "w"}}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))
    for load in (lambda: resume(run_dir, progress_bar="false"), lambda: load_run(run_dir, "latest")):
        with pytest.raises(UserError, match="config.yaml changed after it was signed") as refused:
            load()
        assert "builtins.open" in str(refused.value)  # what would be executed
    assert not marker.exists()


def test_a_file_the_signed_manifest_does_not_list_is_never_loaded(tmp_path: Path) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    newest = interrupted(run_dir)
    (newest / "vecnormalize.pkl").write_bytes(pickle.dumps(CreatesFile(marker)))  # this run normalises nothing
    resume(run_dir, progress_bar="false")
    assert status(run_dir) == "completed" and not marker.exists()
    load_run(run_dir, "final")[1].close()  # its own folder, signed again at the end, loads as before


def test_a_folder_signed_under_another_key_is_refused_until_rlrun_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    newest = interrupted(run_dir)
    assert load_target(run_dir)[1] == newest  # this user's own folder
    monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "someone-else.key"))
    with pytest.raises(UserError, match="not signed with your trust key"):
        load_target(run_dir)
    with pytest.raises(UserError, match="not trusted"):
        load_run(run_dir, "latest")
    with pytest.raises(SystemExit) as ended:
        trust.main([str(run_dir), "--yes"])
    assert ended.value.code == 0 and f"trusted {run_dir} (2 snapshots)" in capsys.readouterr().out
    resume(run_dir, progress_bar="false")
    assert status(run_dir) == "completed"


def test_a_run_folder_written_before_signatures_is_untrusted_until_trusted_once(tmp_path: Path) -> None:
    run_dir = tmp_path / "interrupted"
    shutil.copytree(OLD / "runs" / "gridworld-ppo" / "interrupted", run_dir)
    with pytest.raises(UserError, match="no signed run-manifest.json") as refused:
        load_target(run_dir)
    assert "written by rlrun before it signed run folders" in str(refused.value)
    signatures.trust_folder(run_dir)
    assert load_target(run_dir)[1] == run_dir / "snapshots" / "step-0000000512"


def test_a_damaged_snapshot_under_a_valid_signature_still_falls_back(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    newest = interrupted(run_dir)
    (newest / snapshots.STATE).write_bytes(b"damaged")
    with pytest.warns(UserWarning, match="damaged"):
        assert load_target(run_dir)[1] == snapshots.list_snapshots(run_dir / "snapshots")[0]


def with_serialized_entry(model_zip: Path, key: str, value: object) -> None:
    """Add a pickled entry to a model.zip's ``data``, as anyone can without the key."""
    with zipfile.ZipFile(model_zip) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(members["data"])
    data[key] = {":serialized:": base64.b64encode(pickle.dumps(value)).decode()}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model_zip, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def test_rlrun_eval_of_a_received_model_executes_none_of_its_pickled_entries(tmp_path: Path) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    shutil.copytree(finished(tmp_path / "own", "env.normalize.obs=true"), run_dir)
    with_serialized_entry(run_dir / "model.zip", "extra", CreatesFile(marker))  # a key SB3 would not expect
    (run_dir / "vecnormalize.pkl").write_bytes(pickle.dumps(CreatesFile(marker)))
    with pytest.raises(UserError, match="model.zip changed after it was signed"):
        load_run(run_dir)  # the notebook API refuses what is not trusted
    done = cli(["-m", "rlrun.cli.eval", str(run_dir), "--episodes", "2"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "over 2 episodes" in done.stdout and "read as data only" in done.stderr
    assert not marker.exists()


def test_statistics_read_as_data_are_the_ones_trained_with(tmp_path: Path) -> None:
    own = finished(tmp_path / "own", "env.normalize.obs=true", "env.normalize.reward=true")
    pickled = load_run(own)[1]
    assert isinstance(pickled, VecNormalize)
    (own / "run-manifest.json").unlink()  # as received
    (own / "vecnormalize.pkl").unlink()  # never read as data only anyway
    read = load_run(own, untrusted="data")[1]
    assert isinstance(read, VecNormalize) and not read.training and not read.norm_reward
    for name, rms in pickled.obs_rms.items():
        assert np.array_equal(rms.mean, read.obs_rms[name].mean) and np.array_equal(rms.var, read.obs_rms[name].var)
        assert rms.count == read.obs_rms[name].count
    assert np.array_equal(pickled.ret_rms.var, read.ret_rms.var) and pickled.clip_obs == read.clip_obs


def test_a_received_config_naming_code_outside_the_allow_list_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir, marker = tmp_path / "run", tmp_path / "executed"
    shutil.copytree(finished(tmp_path / "own"), run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    cfg["wrappers"] = {"evil": {"_target_": "builtins.open", "file": str(marker), "mode": "w"}}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match="run code of its own: wrappers.evil") as refused:
        load_run(run_dir, untrusted="data")
    assert f"rlrun-trust {run_dir}" in str(refused.value)
    monkeypatch.setenv("RLRUN_ALLOWED_TARGETS", "builtins.open")  # names policy classes, never a wrapper
    with pytest.raises(UserError, match="wrappers.evil"):
        load_run(run_dir, untrusted="data")
    assert not marker.exists()
    cfg["wrappers"] = {}
    cfg["algo"]["policy"] = "stable_baselines3.common.policies.MultiInputActorCriticPolicy"
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))
    load_run(run_dir, untrusted="data")[1].close()  # a policy class on the allow-list
    cfg["algo"]["policy"] = "tests.rlrun.run.test_received_folders.MyPolicy"
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match=f"algo.policy={cfg['algo']['policy']}") as refused:
        load_run(run_dir, untrusted="data")
    assert "RLRUN_ALLOWED_TARGETS" in str(refused.value)
    monkeypatch.setenv("RLRUN_ALLOWED_TARGETS", cfg["algo"]["policy"])  # the user's own choice, documented
    load_run(run_dir, untrusted="data")[1].close()


class MyPolicy(MultiInputActorCriticPolicy):
    """A policy class of the user's own, named in RLRUN_ALLOWED_TARGETS."""


def test_a_sweep_refuses_to_resume_a_job_it_cannot_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlrun.sweep.plan import REFUSE, RESUME, Job, decide

    run_dir = tmp_path / "gridworld-ppo" / "seed-0"
    interrupted(run_dir)
    record = {**json.loads((run_dir / "run.json").read_text()), "status": "interrupted"}  # as a stopped job's
    (run_dir / "run.json").write_text(json.dumps(record))
    signatures.sign_record(run_dir)  # as rlrun signs a record whose status it changed
    job = Job(["seed=0"], "gridworld-ppo/seed-0", run_dir, record["config_hash"])
    decide(job, stale_after_s=600)
    assert job.action == RESUME  # this user's own stopped job
    monkeypatch.setenv(signatures.KEY_ENV, str(tmp_path / "someone-else.key"))
    decide(job, stale_after_s=600)
    assert job.action == REFUSE and "is not trusted" in str(job.reason) and "rlrun-trust" in str(job.reason)
