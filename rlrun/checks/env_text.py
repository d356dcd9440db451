"""What ``rlrun-envs`` prints: the env configs as a table with their extras, each env as a block of aligned fields,
and the presets, wrapped to a terminal's width."""

from __future__ import annotations

import textwrap

from rlrun.checks.env_listing import ConfigInfo, EnvInfo, list_presets
from rlrun.make import families, gym_make

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


def format_import_failures() -> list[str]:
    """A block per installed env package that fails to import, with its error: its ids are missing from the
    listing (``rlrun-envs --all`` has tried to import every one: :func:`rlrun.make.gym_make.import_failures`)."""
    return [
        "\n".join(
            [
                f"{module} (installed, fails to import: its ids are not listed)",
                _field("error", error),
                _field("fix", "install a version that works with the Gymnasium installed here, or reinstall it"),
            ]
        )
        for module, error in gym_make.import_failures().items()
    ]


def format_presets() -> str:
    """One line per preset of ``conf/tuned/``: the pair it applies to and where it comes from."""
    lines = [f"{'env=<config> algo=<config>':<46} source"]
    lines += [f"  {pair:<44} {source}" for pair, source in list_presets()]
    return "\n".join(lines)
