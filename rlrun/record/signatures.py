"""Which run folders may run code here: HMAC signatures under a per-user key (DESIGN.md, "Folders", Trust).

A run folder holds pickles (snapshots' ``state.pkl``, replay buffers, ``vecnormalize.pkl``, the objects SB3
pickles into ``model.zip``) and a ``config.yaml`` whose ``_target_``s are instantiated: loading them runs code.
So rlrun signs what it writes, as Jupyter signs notebooks: the run manifest (``run-manifest.json``, the sha256
of ``config.yaml``, ``run.json`` at the moment of signing, ``model.zip`` and the normalisation statistics) and
each snapshot's ``manifest.json`` carry an HMAC-SHA256 under a secret key kept outside the folder. A folder this
user's rlrun wrote verifies; a received or altered one does not, and is refused until the user has looked at it
and signed it with ``rlrun-trust RUN_DIR`` (:func:`trust_folder`).

The key: the file named by ``RLRUN_TRUST_KEY``, else ``$XDG_CONFIG_HOME/rlrun/trust.key`` (default
``~/.config/rlrun/trust.key``), created on first use with 32 random bytes, mode 0600. Importable without torch.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record import formats, reading, regular_files
from rlrun.record.formats import write_json

KEY_ENV = "RLRUN_TRUST_KEY"
RUN_MANIFEST = "run-manifest.json"
SNAPSHOT_MANIFEST = "manifest.json"  # rlrun.run.snapshots.MANIFEST
# The top-level files the run manifest covers, when present
RUN_FILES = ("config.yaml", "run.json", "model.zip", "vecnormalize.pkl", "vecnormalize.npz")
PICKLES = ("model.zip", "vecnormalize.pkl", "state.pkl", "replay_buffer.pkl")  # loading these runs code
SIGNATURE = "signature"
RUN = "run"  # what a manifest names its run by: {"id": ..., "config": ...}
# run.json's fields that decide what a resume trains and how a table counts the run: the run manifest signs them
# beside run.json's checksum (under RECORD), so a `running` record's unsigned rewrites can be told to be progress
DECIDING = ("status", "total_timesteps", "budgets", "resume_mode", "config_hash")
RECORD = "record"
TRUST_COMMAND = "rlrun-trust"
HYDRA_DIR = ".hydra"  # Hydra's record of a job (hydra.output_subdir): no run folder


def key_path() -> Path:
    """The key file: ``$RLRUN_TRUST_KEY``, else ``$XDG_CONFIG_HOME/rlrun/trust.key`` (``~/.config`` by default)."""
    if named := os.environ.get(KEY_ENV):
        return Path(named).expanduser()
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "rlrun" / "trust.key"


def _key() -> bytes:
    """This user's secret key, created (mode 0600) on first use; several processes creating it at once agree."""
    path = key_path()
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails if another process created it first: its key is the key
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        key = path.read_bytes()
    check_key_file(path)
    if len(key) < 16:
        raise UserError(
            f"the trust key {path} is too short ({len(key)} bytes): it cannot sign run folders",
            f"remove it to have rlrun create a new one (folders signed with it must then be trusted again "
            f"with {TRUST_COMMAND}), or point {KEY_ENV} at another key file",
        )
    return key


def check_key() -> None:
    """Called before a run folder is created: the key can be read, or created where it is to be (the file named
    by ``RLRUN_TRUST_KEY``, or under ``$XDG_CONFIG_HOME``/``$HOME``). Else a user mistake naming the path and
    ``RLRUN_TRUST_KEY``, instead of a run that fails once it has started and must sign what it wrote."""
    path = key_path()
    try:
        _key()
    except OSError as error:
        if path.is_dir():
            problem = f"the trust key {path} is a folder, not a file"
        else:
            problem = f"the trust key {path} can neither be read nor created ({error.strerror or error})"
        raise UserError(
            f"{problem}: rlrun signs what it writes with it, so nothing was started",
            f"point {KEY_ENV} at a key file in a folder you can write (export {KEY_ENV}=/path/to/trust.key; "
            "it is created on first use), or make that folder writable",
        ) from None


def check_key_file(path: Path) -> None:
    """Refuse (exit 2) a key file that others than its owner may read or write: whoever reads it can sign any
    folder as this user's. The one place the key file's permissions are checked."""
    mode = path.stat().st_mode
    if mode & 0o077:
        raise UserError(
            f"the trust key {path} can be read or written by others (mode {stat.S_IMODE(mode):o}): anyone who reads "
            "it can make any run folder look like yours",
            f"chmod 600 {path}",
        )


def sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks; only of a regular file with one name (a link to
    ``/dev/zero`` would be read for ever: :class:`rlrun.record.regular_files.NotRegularFile`)."""
    digest = hashlib.sha256()
    with os.fdopen(regular_files.open_regular(path, os.O_RDONLY), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mac(payload: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in payload.items() if k != SIGNATURE}, sort_keys=True, separators=(",", ":"))
    return hmac.new(_key(), text.encode(), hashlib.sha256).hexdigest()


def signed(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with its ``signature`` (an HMAC of everything else in it, under this user's key)."""
    return {**{k: v for k, v in payload.items() if k != SIGNATURE}, SIGNATURE: _mac(payload)}


def verifies(payload: Any) -> bool:
    """Whether a manifest read from a folder carries a valid signature under this user's key."""
    if not isinstance(payload, dict) or not isinstance(payload.get(SIGNATURE), str):
        return False
    return hmac.compare_digest(payload[SIGNATURE], _mac(payload))


def config_identity(run_dir: Path) -> str | None:
    """The sha256 of the run's ``config.yaml`` without ``total_timesteps``: a continued run (a larger budget)
    stays itself. None when the file cannot be read as a mapping."""
    config = formats.read_yaml(run_dir / "config.yaml")
    if not isinstance(config, dict):
        return None
    config.pop("total_timesteps", None)
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def _identity(manifest: Any) -> dict[str, Any] | None:
    """The ``run`` a verified run manifest names (None: not verified, or signed before manifests named runs)."""
    if verifies(manifest) and isinstance(manifest.get(RUN), dict) and isinstance(manifest[RUN].get("id"), str):
        return dict(manifest[RUN])
    return None


def identity(run_dir: Path) -> dict[str, Any] | None:
    """The run a snapshot manifest of ``run_dir`` must name: the run manifest's id and the config's identity."""
    named = _identity(_read(run_dir / RUN_MANIFEST))
    return None if named is None else {"id": named["id"], "config": config_identity(run_dir)}


def sign_run(run_dir: Path) -> None:
    """(Re)write the signed run manifest over the top-level files rlrun wrote that are there now, naming the run:
    its id (kept from a verified manifest, else new) and its config's identity. A folder signed before manifests
    named runs has its verified snapshot manifests signed again, naming it."""
    old = _read(run_dir / RUN_MANIFEST)
    named = _identity(old)
    run = {"id": named["id"] if named else secrets.token_hex(8), "config": config_identity(run_dir)}
    files = {name: sha256(run_dir / name) for name in RUN_FILES if os.path.lexists(run_dir / name)}
    write_json(run_dir / RUN_MANIFEST, signed({RUN: run, "files": files, RECORD: _deciding(run_dir)}))
    if named is None and verifies(old):
        _sign_snapshots(run_dir, run, only_verified=True)


def sign_record(run_dir: Path) -> None:
    """Sign ``run.json`` as it is now in the run manifest (a status change, ``budgets``); nothing when the
    manifest does not verify (a folder that is not trusted stays so)."""
    data = _read(run_dir / RUN_MANIFEST)
    if not verifies(data) or not isinstance(data.get("files"), dict) or not (run_dir / "run.json").is_file():
        return
    data["files"]["run.json"] = sha256(run_dir / "run.json")
    data[RECORD] = _deciding(run_dir)
    write_json(run_dir / RUN_MANIFEST, signed(data))


def _deciding(run_dir: Path) -> dict[str, Any] | None:
    """The :data:`DECIDING` fields of ``run_dir``'s ``run.json`` as it is now (None: no readable record)."""
    record = formats.read_json(run_dir / "run.json")
    return None if record is None else {name: record.get(name) for name in DECIDING}


def signed_snapshot(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's manifest, naming its run (:func:`identity`), signed."""
    run = identity(run_dir)
    return signed({**manifest, RUN: run} if run else manifest)


def _sign_snapshots(run_dir: Path, run: dict[str, Any], only_verified: bool) -> int:
    count = 0
    for manifest in sorted(run_dir.glob(f"snapshots/step-*/{SNAPSHOT_MANIFEST}")):
        data = _read(manifest)
        if isinstance(data, dict) and (verifies(data) or not only_verified):
            formats.write_json(manifest, signed({**data, RUN: run}))
            count += 1
    return count


def _read(path: Path) -> Any:
    return formats.read_json(path)


def executed_by(run_dir: Path) -> list[str]:
    """What loading the folder would execute: its pickles, and from its ``config.yaml`` the ``_target_``s, the
    classes ``hydra.utils.get_class`` gets, the wrappers, a ``module:`` prefix of ``env.id`` and ``env.packages``."""
    found = [str(p.relative_to(run_dir)) for name in PICKLES for p in sorted(run_dir.glob(f"**/{name}"))]
    targets: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("_target_"), str):
                path = node.get("path")
                targets.append(f"{node['_target_']}({path})" if isinstance(path, str) else node["_target_"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    config = formats.read_yaml(run_dir / "config.yaml")  # an unreadable config.yaml instantiates nothing
    walk(config)
    found += [f"config.yaml _target_: {t}" for t in sorted(set(targets))]
    if isinstance(config, dict):
        env: dict[str, Any] = config["env"] if isinstance(config.get("env"), dict) else {}
        wrappers = [*(env.get("wrappers") or {}), *(config.get("wrappers") or {})]
        found += [f"config.yaml wrapper: {name}" for name in wrappers]
        if isinstance(env.get("id"), str) and ":" in env["id"]:
            found.append(f"config.yaml env.id entry point: imports {env['id'].split(':', 1)[0]}")
        found += [f"config.yaml env.packages: imports {package}" for package in env.get("packages") or []]
    return found


class NotTrusted(UserError):
    """A folder whose signatures do not verify under this user's key: refused before anything of it runs."""


def not_trusted(run_dir: Path, reason: str, what: str) -> NotTrusted:
    """The refusal of a folder whose signature does not verify: what would run, and how to trust it."""
    executed = executed_by(run_dir)
    shown = ", ".join(executed[:12]) + (f" and {len(executed) - 12} more" if len(executed) > 12 else "")
    return NotTrusted(
        f"{what}: the folder is not trusted ({reason}); loading it would execute code from it: {shown or 'nothing'}",
        f"if you wrote or reviewed it (its config.yaml, and that its pickles come from a source you trust), "
        f"sign it with `{TRUST_COMMAND} {run_dir}`; folders written by rlrun before it signed run folders, by "
        "another user, or under another trust key count as untrusted until trusted once",
    )


def check_run(run_dir: Path, names: tuple[str, ...], what: str) -> None:
    """Refuse (exit 2) unless the run manifest verifies and covers each present file of ``names`` unchanged."""
    data = _read(run_dir / RUN_MANIFEST)
    if data is None:
        raise not_trusted(run_dir, f"it has no signed {RUN_MANIFEST}", what)
    if not verifies(data) or not isinstance(data.get("files"), dict):
        raise not_trusted(run_dir, f"its {RUN_MANIFEST} is not signed with your trust key ({key_path()})", what)
    for name in names:  # a present file that is not regular (a link, a FIFO) is refused, never skipped
        if os.path.lexists(run_dir / name) and data["files"].get(name) != sha256(run_dir / name):
            raise not_trusted(run_dir, f"{name} changed after it was signed", what)


def unsigned_record(run_dir: Path) -> str | None:
    """Why ``run_dir``'s ``run.json`` is not signed under this user's key, or None when it is: the run manifest
    verifies and covers it as it is, or it says ``running`` and differs from the signed record in progress only
    (steps, seconds, times: a run rewrites its record as it goes and signs it when its status changes). A
    ``running`` record's :data:`DECIDING` fields must be the signed ones; a manifest signed before it held them
    has ``total_timesteps`` (and the last of ``budgets``) checked against the signed ``config.yaml``. Folders
    signed before manifests named runs signed ``run.json`` only now and then: their signature is enough."""
    data = _read(run_dir / RUN_MANIFEST)
    if not verifies(data) or not isinstance(data.get("files"), dict):
        return f"it has no {RUN_MANIFEST} signed with your trust key"
    if _identity(data) is None or data["files"].get("run.json") == sha256(run_dir / "run.json"):
        return None
    record = formats.read_json(run_dir / "run.json")
    if record is None or record.get("status") != "running":
        return "run.json changed after it was signed"
    signed_fields = data.get(RECORD)
    if isinstance(signed_fields, dict):
        changed = [name for name in DECIDING if record.get(name) != signed_fields.get(name)]
    else:
        changed = _changed_from_config(run_dir, record)
    if changed:
        return (
            f"run.json's {', '.join(changed)} changed after it was signed (a running record may change its progress "
            "unsigned, never what decides training)"
        )
    return None


def _changed_from_config(run_dir: Path, record: dict[str, Any]) -> list[str]:
    """What of a ``running`` record, signed before manifests held :data:`DECIDING`, differs from its signed
    ``config.yaml``: ``total_timesteps``, and the last of ``budgets`` (each the config's budget)."""
    config = formats.read_yaml(run_dir / "config.yaml")
    total = config.get("total_timesteps") if isinstance(config, dict) else None
    budgets = record.get("budgets")
    changed = ["total_timesteps"] if record.get("total_timesteps") != total else []
    if budgets is not None and not (isinstance(budgets, list) and budgets and budgets[-1] == total):
        changed.append("budgets")
    return changed


def check_record(run_dir: Path, what: str) -> None:
    """Refuse (exit 2) a ``run.json`` changed after it was signed (:func:`unsigned_record`), unless it says
    ``running`` and what changed is progress: a run killed (SIGKILL) after a rewrite it had no time to sign is
    interrupted, not tampered with; a received record that says more (another budget, resume mode or status) is
    not trusted. The run manifest itself is :func:`check_run`'s."""
    if not os.path.lexists(run_dir / "run.json") or not verifies(_read(run_dir / RUN_MANIFEST)):
        return
    if (reason := unsigned_record(run_dir)) is not None:
        raise not_trusted(run_dir, reason, what)


def check_snapshots(run_dir: Path, snapshots: list[Path], what: str) -> None:
    """Refuse (exit 2) when a snapshot's readable manifest is not signed with this user's key. An unreadable
    manifest is damage (the snapshot is skipped as incomplete), not a refusal."""
    run = identity(run_dir)
    for snapshot in snapshots:
        data = _read(snapshot / SNAPSHOT_MANIFEST)
        if data is not None and not verifies(data):
            raise not_trusted(run_dir, f"{snapshot.name}/{SNAPSHOT_MANIFEST} is not signed with your trust key", what)
        if data is not None and run is not None and data.get(RUN) != run:
            raise not_trusted(run_dir, f"{snapshot.name} was signed for another run (or another config)", what)


def check_folder(run_dir: Path, what: str) -> None:
    """Refuse (exit 2) a run folder whose run manifest does not verify over its ``config.yaml``, or one of whose
    snapshots' manifests is not signed: the read-only check before anything of it is loaded or written."""
    check_run(run_dir, ("config.yaml",), what)
    check_record(run_dir, what)
    check_snapshots(run_dir, sorted((run_dir / "snapshots").glob("step-*")), what)


def run_folders(folder: Path) -> list[Path]:
    """``folder`` itself if it is a run folder, else the run folders under it (a sweep's or a study's); never
    Hydra's record of a job or a sweep (``.hydra/``, whose ``config.yaml`` is Hydra's, not a run's)."""
    if (folder / "run.json").is_file() or (folder / "config.yaml").is_file():
        return [folder]
    found = {p.parent for name in ("run.json", "config.yaml") for p in folder.glob(f"**/{name}")}
    return sorted(p for p in found if HYDRA_DIR not in p.relative_to(folder).parts)


def check_reviewable(run_dir: Path, what: str) -> None:
    """Refuse (exit 2) a folder that cannot be reviewed before it is signed: one holding a link or a special file
    (:func:`rlrun.record.regular_files.check_folder`), or a ``config.yaml`` that cannot be read as data (damaged,
    or holding a tag such as ``!!python/object/apply``, which is never constructed), whose ``_target_``s could not be
    listed."""
    regular_files.check_folder(run_dir, what)
    try:
        if os.path.lexists(run_dir / "config.yaml"):
            reading.load_yaml(run_dir / "config.yaml")
    except (OSError, ValueError) as error:
        raise UserError(
            f"{what}: {run_dir / 'config.yaml'} cannot be read as data ({error}), so what it would run cannot be "
            "listed: it is not signed",
            "restore the run's config.yaml from a copy you trust, or leave the folder untrusted",
        ) from None


def trust_folder(run_dir: Path) -> int:
    """Sign a reviewed run folder: its run manifest over the files as they are now, and each snapshot's manifest
    as it is (so a snapshot whose files do not match their checksums stays damaged). Returns the snapshots signed.
    A folder holding a link or a special file is refused (:func:`rlrun.record.regular_files.check_folder`);
    ``rlrun-trust`` refuses one that cannot be reviewed before it lists it (:func:`check_reviewable`)."""
    regular_files.check_folder(run_dir, f"{TRUST_COMMAND} {run_dir}")
    sign_run(run_dir)
    run = identity(run_dir)
    assert run is not None  # just signed
    return _sign_snapshots(run_dir, run, only_verified=False)
