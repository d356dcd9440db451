"""``rlrun-check`` (``python -m rlrun.cli.check env=X [algo=Y] [wrappers=...]``): find problems before training.

Builds exactly what ``rlrun`` would train (through :mod:`rlrun.make.vec_envs`) and reports each check as PASS, FAIL
or SKIP: the env checks of :mod:`rlrun.checks.env_checks`, and with ``algo`` on the command line (``algo=...``
or any ``algo.<key>=...``) the rules training applies before it starts (:mod:`rlrun.checks.rules`,
:mod:`rlrun.algo_checks`): the algorithm's arguments, its fit to the spaces after the wrappers, and the
budgets. ``sim=N`` prints a random-action episode step by step instead (``render=ansi`` prints the
frames). Exit status: 0 all passed, 1 a check failed, 2 a user mistake that stops the checks from
running (bad id, bad value). Writes no files.
"""

from __future__ import annotations

import sys
import textwrap
from contextlib import closing
from typing import Any

import gymnasium as gym
import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from rlrun.checks import env_checks, episode_checks, rules
from rlrun.checks.env_checks import FAIL, INFO, PASS, SKIP, Result
from rlrun.checks.suite import run_checks
from rlrun.cli import mistakes
from rlrun.cli.command_line import CommandLine
from rlrun.config import schema, store
from rlrun.config.budget import fit_to_budget
from rlrun.config.errors import UserError, report_user_errors
from rlrun.config.keys import override_key
from rlrun.make import vec_envs

SIM_RENDER_MODES = ("ansi", "human")
WIDTH = 100  # notes under a check line are wrapped to this width


def _wrap(text: str, indent: int, more: int) -> str:
    # a long path stays whole (file:line can be copied), even past the width
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=" " * indent,
        subsequent_indent=" " * more,
        break_on_hyphens=False,
        break_long_words=False,
    )


def report(results: list[Result]) -> str:
    """One line per check (wrapped to :data:`WIDTH`), its notes indented under it, and a closing count."""
    lines = []
    for r in results:
        lines.append(_wrap(f"{r.status}  {r.name}" + (f": {r.detail}" if r.detail else ""), 0, 6))
        lines += [_wrap(note, 6, 8) for note in r.notes]
    counts = {s: sum(r.status == s for r in results) for s in (PASS, FAIL, SKIP, INFO, episode_checks.WARN)}
    skipped = f", {counts[episode_checks.WARN]} warned" if counts[episode_checks.WARN] else ""
    skipped += f", {counts[SKIP]} skipped" if counts[SKIP] else ""
    info = f", {counts[INFO]} for information" if counts[INFO] else ""
    return "\n".join([*lines, f"{counts[PASS]} passed, {counts[FAIL]} failed{skipped}{info}"])


def simulate(cfg: DictConfig) -> None:
    """Print ``cfg.sim`` random-action steps: action, reward and flags, then the observation or ANSI frame."""
    rules.raise_if(rules.range_problems(cfg))
    if cfg.sim < 0:
        raise UserError(f"sim={cfg.sim} must be >= 0", "sim=N prints N random-action steps, e.g. sim=20")
    with closing(vec_envs.make_env(cfg)) as probe:
        modes = [mode for mode in probe.metadata.get("render_modes", []) if mode in SIM_RENDER_MODES]
    if cfg.render is not None and cfg.render not in modes:
        offered = ", ".join(modes) or "neither"
        fix = "use " + "".join(f"render={mode}, or " for mode in modes) + "no render to print observations"
        raise UserError(f"{cfg.env.id} cannot show render={cfg.render} here (it offers {offered})", fix)
    with closing(vec_envs.make_env(cfg, render_mode=cfg.render)) as env:
        env.action_space.seed(cfg.seed)
        _print_state(env, cfg, f"reset(seed={cfg.seed})", env.reset(seed=cfg.seed)[0])
        for t in range(1, cfg.sim + 1):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, _ = env.step(action)
            head = f"step {t}  action={env_checks.show(action)}  reward={env_checks.show(float(reward))}"
            _print_state(env, cfg, f"{head}  terminated={terminated}  truncated={truncated}", obs)
            if (terminated or truncated) and t < cfg.sim:
                _print_state(env, cfg, "reset", env.reset()[0])


def _print_state(env: gym.Env, cfg: DictConfig, head: str, obs: Any) -> None:
    print(head)
    print(str(env.render()).rstrip("\n") if cfg.render == "ansi" else f"  observation {env_checks.show(obs)}")


def algo_given(overrides: list[str]) -> bool:
    """Whether the command line chose or changed the algorithm (``algo=...``, ``algo.<key>=...``)."""
    keys = [override_key(override) for override in overrides]
    return any(key == "algo" or key.startswith("algo.") for key in keys)


@hydra.main(config_path="pkg://rlrun.conf", config_name="check", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:
    """Check the env (and algorithm) ``rlrun`` would build for these overrides; exit 1 if a check fails."""
    hydra_cfg = HydraConfig.get()
    choices, with_algo = hydra_cfg.runtime.choices, algo_given(list(hydra_cfg.overrides.task))
    with report_user_errors("rlrun-check"):
        if cfg.render is not None and not cfg.sim:
            raise UserError(f"render={cfg.render} shows a simulated episode", "add sim=N, e.g. sim=20")
        if cfg.sim:
            simulate(cfg)
            return
        cfg, scaled = fit_to_budget(cfg, hydra_cfg.overrides.task)  # the config the run would train
        for line in scaled:
            print(line)
        results = run_checks(cfg, with_algo)
    algo = f", algo={choices.get('algo')}" if with_algo else ""
    wrappers = f", wrappers=[{','.join(cfg.wrappers)}]" if cfg.wrappers else ""
    print(f"rlrun-check: env={choices.get('env')} ({cfg.env.id}){algo}{wrappers}, seed={cfg.seed}")
    print(report(results))
    if any(r.status == FAIL for r in results):
        sys.exit(1)


def main() -> None:
    """Console-script entry point: the command line's mistakes are answered before Hydra composes."""
    store.register()  # the schema and resolvers rlrun's configs name
    with report_user_errors("rlrun-check"):
        command = mistakes.check(CommandLine.parse(sys.argv[1:]), schema.CheckConfig, "check")
    sys.argv = [sys.argv[0], *command.argv]  # what Hydra reads: whole floats for integer keys rewritten
    _hydra_main()


if __name__ == "__main__":
    main()
