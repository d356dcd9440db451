"""``rlrun-eval RUN_DIR`` (``python -m rlrun.cli.eval``): evaluate, render or record any saved run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlrun.config.errors import UserError, report_user_errors
from rlrun.run.loading import CHOICES, eval_copies, load_run, run_episodes, success_key
from rlrun.startup import bootstrap


def _copies(args: argparse.Namespace, render_mode: str | None) -> int:
    """How many copies to step together: one when rendering or recording (frames of one episode)."""
    if args.n_envs is not None and args.n_envs < 1:
        raise UserError(f"--n-envs {args.n_envs} must be at least 1", "e.g. --n-envs 8")
    if render_mode is not None:
        if args.n_envs not in (None, 1):
            raise UserError(f"--n-envs {args.n_envs} with --render/--video: frames come from one copy", "drop --n-envs")
        return 1
    return args.n_envs if args.n_envs is not None else min(eval_copies(args.run_dir), args.episodes)


@bootstrap.entry
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
    with report_user_errors("rlrun-eval"):
        if args.episodes < 1:
            raise UserError(f"--episodes {args.episodes} must be at least 1", "e.g. --episodes 10")
        render_mode = "rgb_array" if args.video else args.render
        n_envs = _copies(args, render_mode)
        # a received folder (not trusted) is read from data formats only: no pickle, allow-listed _target_s
        model, env = load_run(args.run_dir, args.snapshot, render_mode, args.seed, n_envs, untrusted="data")
        try:
            key = success_key(args.run_dir)
            result = run_episodes(model, env, args.episodes, args.render, args.video, key)
        except KeyboardInterrupt:  # a stop signal: nothing reported, no video left half written
            if args.video is not None:
                args.video.unlink(missing_ok=True)
            print("rlrun-eval: stopped by SIGINT; nothing written", file=sys.stderr)
            sys.exit(130)
        finally:
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
