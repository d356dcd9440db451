"""What ``rlrun-check`` prints: the checks' results, one line each (:func:`report`), and a simulated episode of
random actions, step by step (:func:`simulate`)."""

from __future__ import annotations

import textwrap
from contextlib import closing
from typing import Any

import gymnasium as gym
from omegaconf import DictConfig

from rlrun.checks import env_checks, episode_checks, rules
from rlrun.checks.env_checks import FAIL, INFO, PASS, SKIP, Result
from rlrun.config.errors import UserError, raise_if
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
    raise_if(rules.range_problems(cfg))
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
