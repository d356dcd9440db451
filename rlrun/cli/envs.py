"""``rlrun-envs`` (``python -m rlrun.cli.envs``): which envs there are, their spaces, and what trains on them.

First the env configs (``conf/env``): each with its id, the pip extra it needs and whether that is installed
here. Then, for each registered env: its id, entry point, observation and action spaces, ``max_episode_steps``,
``reward_threshold``, whether it is a goal env, which of rlrun's algorithms (``conf/algo/*.yaml``) fit it,
and the config to use with ``env=``. The spaces come from making the env; an env whose optional
dependency is missing (box2d, mujoco, ...) is listed with the reason instead of its spaces. ``--all`` also
lists the ids that the installed env families register (ALE, Gymnasium-Robotics, MiniGrid: hundreds of ids,
imported here only), from their registrations, without making them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

from rlrun.checks.env_listing import list_configs, list_envs
from rlrun.checks.env_text import format_block, format_configs, format_import_failures, format_presets
from rlrun.config.errors import report_user_errors


def main(argv: list[str] | None = None) -> None:
    """Print the listing as blocks of text, or as JSON with ``--json``."""
    parser = argparse.ArgumentParser(
        prog="rlrun-envs", description="List the rlrun envs: spaces, limits, and the algorithms that fit."
    )
    parser.add_argument(
        "--all",
        nargs="?",
        const="",
        metavar="PATTERN",
        help="every registered Gymnasium env, not only rlrun's; PATTERN keeps the ids holding it (or a glob: 'Mini*')",
    )
    parser.add_argument(
        "--packages", nargs="+", default=[], metavar="MODULE", help="import these modules first (env.packages)"
    )
    parser.add_argument("--json", action="store_true", help="a JSON list of objects instead of text")
    parser.add_argument("--configs", action="store_true", help="only the env configs, their extras and ids")
    parser.add_argument("--presets", action="store_true", help="the tuned presets (conf/tuned/), applied by pair")
    args = parser.parse_args(argv)
    configs = list_configs()
    if args.presets:
        text = format_presets()
    elif args.configs:
        text = json.dumps([asdict(c) for c in configs], indent=2) if args.json else format_configs(configs)
    else:
        with report_user_errors("rlrun-envs"):
            infos = list_envs(all_envs=args.all is not None, pattern=args.all, packages=args.packages)
        if args.json:
            text = json.dumps([asdict(info) for info in infos], indent=2)
        else:
            failures = format_import_failures() if args.all is not None else []  # installed, but fail to import
            text = "\n\n".join([format_configs(configs), *map(format_block, infos), *failures])
    try:
        print(text)
    except BrokenPipeError:  # `rlrun-envs --all | head`: stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    main()
