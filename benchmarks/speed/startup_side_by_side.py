"""Start-up to the first env step of two rlrun installs, side by side: ``python -m benchmarks.speed.startup_side_by_side
OTHER_PYTHON [--rounds 9]`` alternates this checkout's ``python -m rlrun`` with OTHER_PYTHON's (another install
of rlrun, e.g. an earlier commit: ``git worktree add /tmp/old COMMIT && python3 -m venv /tmp/oldvenv &&
/tmp/oldvenv/bin/pip install torch==2.13.0 -e /tmp/old``) on CartPole PPO with the Zoo's hyperparameters, through
the same first-step harness as the ``startup`` benchmark, after a round that is not counted. It prints the
medians and the ratio round by round; nothing is written to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import common

FIRST_STEP = str(common.ROOT / "benchmarks" / "speed" / "first_step.py")
ARGS = ["env=cartpole", "algo=ppo", "~tuned", "+benchmark/zoo=cartpole_ppo", "progress_bar=false"]


def main() -> None:
    """Parse the options, alternate the two installs, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other_python", help="the python of the other rlrun install")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    sides = {"other": args.other_python, "this": sys.executable}
    times: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(-1, args.rounds):
            for name, python in sides.items():
                stamp = Path(tmp, "stamp")
                stamp.unlink(missing_ok=True)
                start = time.time()
                run_dir = f"hydra.run.dir={tmp}/{name}-{rnd}"
                subprocess.run([python, FIRST_STEP, str(stamp), "rlrun", *ARGS, run_dir], cwd=tmp, check=True)
                if rnd >= 0:
                    times[name].append(float(stamp.read_text()) - start)
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.3f} s ({' '.join(f'{v:.2f}' for v in values)})")
    ratios = [t / o for o, t in zip(times["other"], times["this"], strict=True)]
    print("this / other, round by round:", " ".join(f"{r:.3f}" for r in ratios))


if __name__ == "__main__":
    main()
