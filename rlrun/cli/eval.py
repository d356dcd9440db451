"""``rlrun-eval RUN_DIR`` (``python -m rlrun.cli.eval``): evaluate, render or record any saved run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlrun.checks import rules
from rlrun.config.errors import UserError, raise_if, report_user_errors
from rlrun.playback import video
from rlrun.playback.loading import CHOICES, load_run, success_key
from rlrun.playback.video import Stopped, run_episodes
from rlrun.record import signatures
from rlrun.run.progress import episodes_word


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlrun-eval",
        description="Evaluate a saved run (its final model or a snapshot), show its episodes or record a video.",
        epilog="Example: rlrun-eval outputs/runs/cartpole-ppo/<stamp> --video episode.mp4",
    )
    parser.add_argument("run_dir", type=Path, help="a run folder (outputs/runs/<env>-<algo>/<stamp>)")
    parser.add_argument("--snapshot", default="final", help=f"{CHOICES} (default: final, else the newest snapshot)")
    parser.add_argument("--episodes", type=int, help="episodes (default: 10; 1 with --video)")
    parser.add_argument(
        "--render", choices=["ansi", "human"], help="ansi: print each step's text frame; human: show a window"
    )
    parser.add_argument(
        "--video", type=Path, help="record to FILE.mp4 (streamed, any length) or FILE.gif (capped: held in memory)"
    )
    parser.add_argument("--seed", type=int, help="seed of the evaluation env (default: the run's eval stream)")
    parser.add_argument(
        "--n-envs", type=int, help="env copies stepped together (default: the run's eval.n_envs; 1 to render)"
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """``rlrun-eval RUN_DIR [--snapshot S] [--episodes N] [--render ansi|human] [--video FILE] [--seed S]``."""
    args = _parser().parse_args(argv)
    with report_user_errors("rlrun-eval"):
        episodes = args.episodes if args.episodes is not None else 1 if args.video else 10
        if episodes < 1:
            raise UserError(f"--episodes {episodes} must be at least 1", "e.g. --episodes 10")
        if args.seed is not None:
            raise_if(rules.seed_problems(args.seed, "--seed "))
        signatures.check_key()  # RLRUN_TRUST_KEY a folder, or a path that cannot be made: said, not a traceback
        render_mode = video.render_mode(args.render, args.video)
        n_envs = video.copies(args.n_envs, render_mode, episodes, args.run_dir)
        # a received folder (not trusted) is read from data formats only: no pickle, allow-listed _target_s
        model, env = load_run(args.run_dir, args.snapshot, render_mode, args.seed, n_envs, untrusted="data")
        try:
            result = run_episodes(model, env, episodes, args.render, args.video, success_key(args.run_dir))
        except Stopped as stop:
            print(f"rlrun-eval: {stop}; {'no video written' if args.video else 'nothing reported'}", file=sys.stderr)
            sys.exit(stop.exit_status)
        finally:
            env.close()
    success = "" if result.success_rate is None else f", success rate {result.success_rate:.2f}"
    print(
        f"{args.run_dir}: mean return {result.mean_return:.3f} ± {result.std_return:.3f} "
        f"over {episodes_word(len(result.returns))}{success}"
    )
    if args.video:
        print(f"video: {args.video}")
    sys.exit(0)


if __name__ == "__main__":
    main()
