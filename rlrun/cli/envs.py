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
import textwrap
from dataclasses import asdict

from rlrun.checks.env_listing import ConfigInfo, EnvInfo, list_configs, list_envs, list_presets
from rlrun.config.errors import report_user_errors
from rlrun.make import families

WIDTH = 100  # the human listing stays readable in a terminal this wide
KEY_WIDTH = 13  # the column of the field names in a block
CONFIG_WIDTH, ID_WIDTH, EXTRA_WIDTH = 28, 40, 9  # the columns of the env configs' table


def format_configs(infos: list[ConfigInfo]) -> str:
    """The env configs as a table of :data:`WIDTH` columns at most, with how to install what is missing."""
    lines = [f"{'env=<config>':<{CONFIG_WIDTH + 2}} {'env.id':<{ID_WIDTH}} {'extra':<{EXTRA_WIDTH}} installed here"]
    for info in infos:
        env_id = info.id or "any id: env.id=..."
        state = "" if info.extra is None else ("installed" if info.installed else "missing")
        lines.append(
            f"  {info.config:<{CONFIG_WIDTH}} {env_id:<{ID_WIDTH}} {info.extra or '-':<{EXTRA_WIDTH}} {state}".rstrip()
        )
    # one command a line: a clone's install form names its folder, which two of them on one line would overflow
    lines.append(f"  install an extra: {families.install_command('<extra>')}")
    lines.append(f"  install them all: {families.install_command('envs')}")
    return "\n".join(lines)


def _field(key: str, value: str) -> str:
    indent = " " * (2 + KEY_WIDTH)
    return textwrap.fill(
        value, WIDTH, initial_indent=f"  {key:<{KEY_WIDTH}}", subsequent_indent=indent, break_on_hyphens=False
    )


def format_block(info: EnvInfo) -> str:
    """One env as a block of aligned ``field value`` lines, wrapped to :data:`WIDTH` columns."""
    threshold = "none" if info.reward_threshold is None else f"{info.reward_threshold:g}"
    limit = "none" if info.max_episode_steps is None else info.max_episode_steps
    lines = [info.id, _field("use", f"env={info.config}"), _field("entry point", info.entry_point)]
    if info.unavailable is not None:
        lines.append(_field("spaces", f"unavailable: {info.unavailable}"))
    else:
        lines += [
            _field("observation", str(info.observation_space)),
            _field("action", str(info.action_space)),
        ]
    lines.append(_field("episodes", f"max_episode_steps {limit}, reward_threshold {threshold}"))
    if info.unavailable is None:
        lines.append(_field("goal env", "yes" if info.goal_env else "no"))
        lines.append(_field("algorithms", ", ".join(info.algorithms or []) or "none"))
    return "\n".join(lines)


def format_presets() -> str:
    """One line per preset of ``conf/tuned/``: the pair it applies to and where it comes from."""
    lines = [f"{'env=<config> algo=<config>':<46} source"]
    lines += [f"  {pair:<44} {source}" for pair, source in list_presets()]
    return "\n".join(lines)


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
            text = "\n\n".join([format_configs(configs), *map(format_block, infos)])
    try:
        print(text)
    except BrokenPipeError:  # `rlrun-envs --all | head`: stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    main()
