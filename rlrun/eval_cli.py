"""Evaluate, render or record any saved run: ``python -m rlrun.eval_cli <run_dir>`` (``rlrun-eval``).

:func:`load_run` is the notebook API: the model and a ready evaluation env built from the run's own
``config.yaml``, with its VecNormalize statistics.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun import build, lazy_dynamo, snapshots
from rlrun.errors import UserError, report_user_errors
from rlrun.evaluation import EvalResult, evaluate
from rlrun.train import configure_torch

CHOICES = "final, latest, best or a step number"


def _find_model(run_dir: Path, snapshot: str) -> tuple[Path, Path | None]:
    """The model file and the VecNormalize statistics beside it for ``snapshot``."""
    folder = run_dir / "snapshots"
    if snapshot == "final" and (run_dir / "model.zip").exists():
        return run_dir / "model.zip", run_dir / "vecnormalize.pkl"
    if snapshot in ("final", "latest"):
        chosen = snapshots.newest_complete(folder)
    elif snapshot == "best":
        chosen = snapshots.best(folder)
    elif snapshot.isdigit():
        chosen = folder / snapshots.snapshot_name(int(snapshot))
        if not snapshots.is_complete(chosen):
            steps = [
                snapshots.manifest(s)["step"] for s in snapshots.list_snapshots(folder) if snapshots.is_complete(s)
            ]
            raise UserError(f"{run_dir} has no complete snapshot at step {snapshot}", f"choose one of: {steps}")
    else:
        raise UserError(f"--snapshot {snapshot} is not one of {CHOICES}", "e.g. --snapshot final")
    if chosen is None:
        raise UserError(
            f"{run_dir} has no model to evaluate (no model.zip and no complete snapshot)",
            "evaluate a run that finished or took a snapshot; train one with `python -m rlrun`",
        )
    return chosen / "model.zip", chosen / "vecnormalize.pkl"


def _run_config(run_dir: Path) -> DictConfig:
    if not (run_dir / "config.yaml").is_file():
        raise UserError(f"{run_dir} is not a run folder (no config.yaml)", "give a folder under outputs/runs/")
    cfg = OmegaConf.load(run_dir / "config.yaml")
    assert isinstance(cfg, DictConfig)
    return cfg


def load_run(
    run_dir: str | Path,
    snapshot: str = "final",
    render_mode: str | None = None,
    seed: int | None = None,
    n_envs: int = 1,
) -> tuple[BaseAlgorithm, VecEnv]:
    """The run's model (``final``, ``latest``, ``best`` or a step) and an eval env built from its config.

    The env is ``n_envs`` copies with the run's wrappers and frozen VecNormalize statistics, copy i
    seeded with the run's evaluation stream (or ``seed``) + i.
    """
    run_dir = Path(run_dir)
    cfg = _run_config(run_dir)
    configure_torch(cfg)
    model_path, stats = _find_model(run_dir, str(snapshot))
    normalizer = stats if stats is not None and stats.exists() else None
    env = build.make_eval_env(cfg, render_mode, seed, normalizer, n_envs=n_envs)
    return build.load_model(cfg, model_path, env), env


def eval_copies(run_dir: Path) -> int:
    """The run's ``eval.n_envs``; 1 for runs written before the key (they evaluated on one copy)."""
    return int(OmegaConf.select(_run_config(run_dir), "eval.n_envs", default=1))


def _writer(path: Path, fps: int) -> Any:
    import imageio.v2 as imageio

    if path.suffix.lower() not in (".gif", ".mp4"):
        raise UserError(f"--video {path}: the file must end in .gif or .mp4", "e.g. --video episode.gif")
    if path.suffix.lower() == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise UserError("--video *.mp4 needs ffmpeg", "pip install imageio-ffmpeg, or write a .gif") from None
        return imageio.get_writer(path, fps=fps)
    return imageio.get_writer(path, mode="I", duration=1000 / fps, loop=0)


def run_episodes(
    model: BaseAlgorithm, env: VecEnv, episodes: int, render: str | None, video: Path | None
) -> EvalResult:
    """Evaluate, printing ANSI frames or writing ``rgb_array`` frames to ``video`` as it goes.

    Frames come from the first copy: render and record on a one-copy env (``load_run``'s default).
    """
    if video is None and render != "ansi":
        return evaluate(model, env, episodes)
    base = env.unwrapped.envs[0]  # type: ignore[attr-defined]
    writer = _writer(video, int(base.metadata.get("render_fps", 30))) if video else None
    frames = 0

    def show(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        nonlocal frames
        if locals_["i"] != 0:
            return
        frame = base.render()
        if writer is not None:
            writer.append_data(np.asarray(frame))
        else:
            print(frame)
        frames += 1

    try:
        return evaluate(model, env, episodes, on_step=show)
    finally:
        if writer is not None:
            writer.close()


def _copies(args: argparse.Namespace, render_mode: str | None) -> int:
    """How many copies to step together: one when rendering or recording (frames of one episode)."""
    if args.n_envs is not None and args.n_envs < 1:
        raise UserError(f"--n-envs {args.n_envs} must be at least 1", "e.g. --n-envs 8")
    if render_mode is not None:
        if args.n_envs not in (None, 1):
            raise UserError(f"--n-envs {args.n_envs} with --render/--video: frames come from one copy", "drop --n-envs")
        return 1
    return args.n_envs if args.n_envs is not None else eval_copies(args.run_dir)


def main(argv: list[str] | None = None) -> None:
    """``rlrun-eval RUN_DIR [--snapshot S] [--episodes N] [--render ansi] [--video FILE] [--seed S]``."""
    parser = argparse.ArgumentParser(prog="rlrun-eval", description="Evaluate, render or record a saved run.")
    parser.add_argument("run_dir", type=Path, help="a run folder (outputs/runs/<env>-<algo>/<stamp>)")
    parser.add_argument("--snapshot", default="final", help=f"{CHOICES} (default: final, else the newest snapshot)")
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes (default: 10)")
    parser.add_argument("--render", choices=["ansi"], help="print each step's ANSI frame")
    parser.add_argument("--video", type=Path, help="record rgb_array frames to FILE.gif or FILE.mp4")
    parser.add_argument("--seed", type=int, help="seed of the evaluation env (default: the run's eval stream)")
    parser.add_argument(
        "--n-envs", type=int, help="env copies stepped together (default: the run's eval.n_envs; 1 to render)"
    )
    args = parser.parse_args(argv)
    lazy_dynamo.install()
    with report_user_errors("rlrun-eval"):
        if args.episodes < 1:
            raise UserError(f"--episodes {args.episodes} must be at least 1", "e.g. --episodes 10")
        render_mode = "rgb_array" if args.video else args.render
        n_envs = _copies(args, render_mode)
        model, env = load_run(args.run_dir, args.snapshot, render_mode, args.seed, n_envs)
        result = run_episodes(model, env, args.episodes, args.render, args.video)
        env.close()
    success = "" if result.success_rate is None else f"  success rate {result.success_rate:.2f}"
    print(
        f"{args.run_dir}: mean return {result.mean_return:.3f} ± {result.std_return:.3f} "
        f"over {len(result.returns)} episodes{success}"
    )
    if args.video:
        print(f"video: {args.video}")
    sys.exit(0)


if __name__ == "__main__":
    main()
