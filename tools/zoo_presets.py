"""Convert RL Baselines3 Zoo's tuned hyperparameters into rlrun presets (conf/tuned/<env>_<algo>.yaml).

Run by hand from the repository root, after ``pip install rl_zoo3==<version>`` (``--no-deps`` is enough: only its
``rl_zoo3/hyperparams/*.yml`` are read, never imported or run)::

    python -m tools.zoo_presets            # writes conf/tuned/, lists what it kept and could not convert
    python -m tools.zoo_presets --presets-page   # also rewrites docs/presets.md's table from conf/tuned/

One preset per pair the Zoo tunes whose env has a config in conf/env/ (matched by the env's id without its version:
the Zoo tunes MuJoCo v4 and Fetch v1 ids, rlrun's configs run v5 and v4; each preset says so) and whose algorithm
has one in conf/algo/ (the Zoo's her.yml is reference only, its Fetch tasks with HER are tqc.yml's and become
her_tqc presets; ddpg.yml is converted once a conf/algo/ddpg.yaml exists). A preset that is not generated (tuned
here) is never replaced. What a Zoo entry holds that rlrun cannot express is listed, in the run's report and in
the preset's header, never dropped silently.
``algo.policy`` is written only where the Zoo's differs from the one rlrun picks for the env (ARS's LinearPolicy), so
a preset keeps working with wrappers that change the observations; a wrapper the env config applies already (Atari's,
MiniGrid's) is not added twice, and a minibatch larger than the rollout becomes the rollout (what SB3 does with it).
tests/tools/test_zoo_presets.py checks that the committed presets are what this writes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import inspect
import re
import sys
import textwrap
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_module

from rlrun.config import store
from rlrun.make import models, vec_envs
from tools import zoo_readme
from tools.zoo_readme import MARKER, is_generated, steps
from tools.zoo_values import Unconvertible, action_noise, kwargs_value, normalize, schedule, yaml_scalar, yaml_text

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
BENCHMARK = Path(__file__).with_name("zoo_benchmark.md")
# The Zoo's hyperparameter files and the rlrun algorithm each converts to (an entry is converted only when
# conf/algo/<algo>.yaml exists: ddpg has none unless someone adds it).
ALGO_FILES = {
    "a2c.yml": "a2c",
    "ars.yml": "ars",
    "crossq.yml": "crossq",
    "ddpg.yml": "ddpg",
    "dqn.yml": "dqn",
    "ppo.yml": "ppo",
    "ppo_lstm.yml": "recurrent_ppo",
    "qrdqn.yml": "qrdqn",
    "sac.yml": "sac",
    "td3.yml": "td3",
    "tqc.yml": "tqc",
    "trpo.yml": "trpo",
}
# An entry with replay_buffer_class: HerReplayBuffer is rlrun's HER config on that base algorithm.
HER_ALGOS = {"sac": "her", "tqc": "her_tqc"}
REFERENCE_ONLY = {"her.yml": "reference only: the Zoo no longer reads it (its Fetch tasks with HER are in tqc.yml)"}
# Keys of a Zoo entry that rlrun has no place for (the Zoo's own callbacks, VecEnv wrappers, Monitor arguments).
UNSUPPORTED = {
    "callback": "rlrun has no callback key (its own callbacks evaluate and snapshot)",
    "vec_env_wrapper": "rlrun wraps single env copies only",
    "monitor_kwargs": "rlrun's Monitor takes no arguments",
}

# The families the Zoo evaluates with sampled actions (its deterministic_eval = not (is_atari or is_minigrid)): their
# presets evaluate so too, as the Zoo's published scores were measured.
SAMPLED_EVALUATION = {"atari": "Atari", "minigrid": "MiniGrid"}
# Envs whose v5 observation differs from the v4 one the Zoo tunes, and the env kwargs that give v5 v4's observation.
V4_OBSERVATION = {"Ant": {"include_cfrc_ext_in_observation": False}}
# What those kwargs do, for the preset's header.
V4_OBSERVATION_NOTE = {"Ant": "27 values, as Ant-v4; 105 with the contact forces Ant-v5 adds by default"}
# Envs whose v5 observation differs from v4's with no argument to undo it: their presets say so.
V4_ONLY = {
    "Humanoid": "Humanoid-v5 observes 348 values where Humanoid-v4 observed 376 (v5 leaves out the world body's terms,"
    " and no argument puts them back): these values are tuned for v4's observation, not re-verified on v5.",
}
# Why the Zoo entries no env config matches are skipped, by a pattern of their key (the first that matches).
SKIPPED = (
    (r"^default$", "the Zoo's values for any id without an entry of its own, not a pair"),
    (r"Bullet", "a PyBullet env: rlrun has no PyBullet family"),
    (r"NoVel", "the Zoo's own variant without velocities (made by its wrapper), not a registered id"),
    (r"^Panda", "a panda-gym env: rlrun has no panda-gym family"),
    (r"^(A1|Neck|donkey|parking|RocketLander)", "a third-party env, not of an rlrun family"),
    (r".", "no env config in conf/env/ for this id (its family config runs it: env=<family> env.id=<id>)"),
)


@dataclass
class EnvConfig:
    """What the converter needs of one conf/env file."""

    name: str
    id: str  # without a module: prefix
    extra: str | None
    wrappers: dict[str, Any]
    frame_stack: int | None


@dataclass
class Preset:
    """One converted pair: the file's text and what the Zoo's entry held that it could not express."""

    name: str
    text: str
    not_converted: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """A preset being converted from one Zoo entry: its ``env``, ``wrappers`` and ``algo`` nodes, their comments,
    and what could not be converted; with the composed config (``~tuned``) and the spaces of the env it is for."""

    cfg: Any
    config: EnvConfig
    entry: dict[str, Any]
    algo_cls: type
    observation_space: Any
    action_space: Any
    env: dict[str, Any] = field(default_factory=dict)
    wrappers: dict[str, Any] = field(default_factory=dict)
    algo: dict[str, Any] = field(default_factory=dict)
    comments: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def env_key(self, name: str, value: Any) -> bool:
        """Convert a key of the Zoo's that configures the env; False for any other key."""
        if name == "n_envs":
            self.env["n_envs"] = int(value)
        elif name == "normalize":
            self.env["normalize"] = normalize(value)
            shown = yaml_scalar(value) if isinstance(value, bool) else value
            self.comments["env.normalize"] = f"the Zoo's normalize: {shown} (VecNormalize; its gamma is algo.gamma)"
        elif name == "frame_stack":
            if value != self.config.frame_stack:  # else the env config stacks as many already
                self.env["frame_stack"] = int(value)
        elif name == "env_kwargs":
            self.env["kwargs"] = dict(value)
        elif name == "env_wrapper":
            for item in value if isinstance(value, list) else [value]:
                target, kwargs = next(iter(item.items())) if isinstance(item, dict) else (item, {})
                self.env_wrapper(target, kwargs or {})
        else:
            return False
        return True

    def algo_key(self, name: str, value: Any) -> None:
        """Convert a key of the Zoo's that is (or makes) an argument of the algorithm."""
        params = inspect.signature(self.algo_cls).parameters
        if name == "policy":
            auto = models.policy_for(self.cfg, self.observation_space)
            if value != auto:
                self.algo["policy"] = value
                self.comments["algo.policy"] = f"the Zoo's (rlrun would choose {auto})"
        elif name == "noise_type":
            std, n_actions = self.entry["noise_std"], int(self.action_space.shape[0])
            self.algo["action_noise"] = action_noise(value, std, n_actions)
            about = f"the Zoo's noise_type {value}, noise_std {std}"
            self.comments["algo.action_noise"] = f"{about}, on each of the {n_actions} action dims"
        elif name == "noise_std":
            pass  # with noise_type
        elif name == "replay_buffer_class":
            if str(value) != "HerReplayBuffer":
                raise Unconvertible(f"{value!r}: only HerReplayBuffer (algo=her, her_tqc) is known")
        elif name in ("policy_kwargs", "replay_buffer_kwargs"):
            self.algo[name] = kwargs_value(value)
            if isinstance(value, str):
                shown = re.sub(r"\(\s+|\s+\)", lambda m: m[0].strip(), value.strip())
                self.comments[f"algo.{name}"] = f"the Zoo's {shown}"
        elif name in UNSUPPORTED:
            raise Unconvertible(UNSUPPORTED[name])
        elif name not in params:
            raise Unconvertible(f"not an argument of {self.algo_cls.__name__}")
        else:
            self.algo[name] = argument(value, params[name])
            if isinstance(value, str) and value.startswith("lin_"):
                self.comments[f"algo.{name}"] = f"the Zoo's {value}: linear from {value[4:]} to 0 over the run"

    def env_wrapper(self, target: str, kwargs: dict[str, Any]) -> None:
        """One of the Zoo's ``env_wrapper``: a wrapper the env config applies already keeps its entry there (with
        the Zoo's arguments where they differ); any other becomes an entry of ``wrappers``, after the user's."""
        carried = [name for name, node in self.config.wrappers.items() if node.get("_target_") == target]
        if carried:
            node = self.config.wrappers[carried[0]]
            changed = {k: v for k, v in kwargs.items() if node.get(k) != v}
            if changed:
                self.env.setdefault("wrappers", {})[carried[0]] = changed
                self.comments[f"env.wrappers.{carried[0]}"] = f"the Zoo's arguments of {target}"
            return
        if target.startswith("rl_zoo3."):
            raise Unconvertible(f"{target} is the Zoo's own wrapper (rl_zoo3 is not a dependency of rlrun)")
        key = re.sub(r"(?<!^)(?=[A-Z])", "_", target.rsplit(".", 1)[1]).lower()
        self.wrappers[key] = {"_target_": target, "_partial_": True, **kwargs}
        self.comments[f"wrappers.{key}"] = "the Zoo's env_wrapper (applied after the wrappers of the command line)"

    def as_the_zoo_observes(self, key: str) -> None:
        """For an env whose v5 observation differs from the v4 one the Zoo's entry ``key`` tunes: the env kwargs
        that give v5 v4's observation (:data:`V4_OBSERVATION`)."""
        kwargs = V4_OBSERVATION.get(base_name(self.config.id))
        if kwargs is None or key == self.config.id:
            return
        self.env["kwargs"] = {**self.env.get("kwargs", {}), **kwargs}
        for name in kwargs:
            self.comments[f"env.kwargs.{name}"] = f"v4's observation, which the Zoo's {key} values are tuned for"

    def whole_rollout(self) -> None:
        """An on-policy minibatch larger than the rollout, which rlrun refuses, as the rollout's size: SB3 then takes
        the whole rollout as one minibatch, so training is the same."""
        if "batch_size" not in self.algo or "n_steps" not in self.cfg.algo or "buffer_size" in self.cfg.algo:
            return
        rollout = self.algo.get("n_steps", self.cfg.algo.n_steps) * self.env.get("n_envs", self.cfg.env.n_envs)
        if self.algo["batch_size"] > rollout:
            zoo = self.algo["batch_size"]
            self.comments["algo.batch_size"] = (
                f"the Zoo's {zoo} is more than the rollout: SB3 takes all {rollout} at once"
            )
            self.algo["batch_size"] = rollout


def skipped_entries(skipped: set[tuple[str, str]]) -> list[str]:
    """One report line per Zoo entry no env config matches: the files that hold it, and why it is skipped."""
    files: dict[str, list[str]] = {}
    for key, file in sorted(skipped):
        files.setdefault(key, []).append(file)
    lines = []
    for key, found in files.items():
        why = next(reason for pattern, reason in SKIPPED if re.search(pattern, key))
        lines.append(f"skipped: {key} ({', '.join(found)}): {why}")
    return lines


def argument(value: Any, param: inspect.Parameter) -> Any:
    """A constructor argument: ``lin_`` schedules converted, whole floats made ints for ``int`` arguments."""
    value = schedule(value)
    annotation = str(param.annotation)
    if isinstance(value, float) and value.is_integer() and "int" in annotation and "float" not in annotation:
        return int(value)
    return value


def zoo_location() -> tuple[Path, str]:
    """The installed rl_zoo3's hyperparams folder (found without importing the package) and its version."""
    spec = importlib.util.find_spec("rl_zoo3")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("rl_zoo3 is not installed: pip install --no-deps rl_zoo3==2.9.2")
    return Path(next(iter(spec.submodule_search_locations))) / "hyperparams", importlib.metadata.version("rl_zoo3")


def base_name(env_id: str) -> str:
    """An env id without its module prefix and version: ``gymnasium_robotics:FetchReach-v4`` -> ``FetchReach``."""
    return re.sub(r"-v\d+$", "", env_id.split(":")[-1])


def env_configs(conf: Path) -> list[EnvConfig]:
    """The env configs with a fixed id (the family blanks, whose id is ``???``, are left out)."""
    found = []
    for path in sorted((conf / "env").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        env_id = str(data.get("id", "???"))
        if env_id != "???":
            wrappers = data.get("wrappers") or {}
            name, frame_stack = path.stem, data.get("frame_stack")
            found.append(EnvConfig(name, env_id.split(":")[-1], data.get("extra"), wrappers, frame_stack))
    return found


def zoo_entry(entries: dict[str, Any], env: EnvConfig) -> str | None:
    """The key of the Zoo's entry for ``env``: its id, else the same env at another version, else ``atari``."""
    if env.id in entries:
        return env.id
    if env.extra == "atari":
        return "atari" if "atari" in entries else None
    same = [key for key in entries if base_name(key) == base_name(env.id)]
    return max(same, key=lambda key: int(key.rsplit("-v", 1)[1])) if same else None


def benchmark_scores(path: Path = BENCHMARK) -> dict[tuple[str, str], tuple[str, str, str, str]]:
    """(Zoo algo, env name without version) -> (env id, mean, std, budget) from the Zoo's benchmark table."""
    scores = {}
    for line in path.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"-?[\d.]+", cells[2]):
            scores[(cells[0], base_name(cells[1]))] = (cells[1], cells[2], cells[3], cells[4])
    return scores


@contextmanager
def composer() -> Iterator[Any]:
    """Hydra's compose on rlrun's configs, as ``python -m rlrun`` composes them."""
    store.register()
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        yield lambda *overrides: compose("config", overrides=list(overrides))


class Converter:
    """Converts the Zoo entries of one rl_zoo3 install for the env and algo configs in ``conf``."""

    def __init__(self, conf: Path, compose: Any) -> None:
        self.conf = conf
        self.compose = compose
        self.zoo_dir, self.version = zoo_location()
        self.scores = benchmark_scores()
        self.spaces: dict[str, tuple[Any, Any]] = {}

    def env_spaces(self, cfg: Any) -> tuple[Any, Any]:
        """The observation and action space of one env copy as rlrun builds it (wrappers applied), once per env."""
        key = cfg.env.id
        if key not in self.spaces:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env = vec_envs.make_env(cfg)
            self.spaces[key] = (env.observation_space, env.action_space)
            env.close()
        return self.spaces[key]

    def presets(self, report: list[str]) -> list[Preset]:
        """Every pair's preset; ``report`` gets a line for each Zoo file or pair not converted."""
        envs = env_configs(self.conf)
        algos = {path.stem for path in (self.conf / "algo").glob("*.yaml")}
        made: list[Preset] = []
        skipped: set[tuple[str, str]] = set()  # (entry, file) that no env config matches
        for file in sorted(path.name for path in self.zoo_dir.glob("*.yml")):
            if file in REFERENCE_ONLY:
                report.append(f"not converted: {file}: {REFERENCE_ONLY[file]}")
                continue
            entries = yaml.safe_load((self.zoo_dir / file).read_text())
            matched = set()
            for env in envs:
                key = zoo_entry(entries, env)
                if key is None:
                    continue
                matched.add(key)
                algo = ALGO_FILES[file]
                if str(entries[key].get("replay_buffer_class")) == "HerReplayBuffer":
                    algo = HER_ALGOS.get(algo, algo)
                if algo not in algos:
                    report.append(f"not converted: {file} {key} -> env={env.name}: no conf/algo/{algo}.yaml")
                    continue
                made.append(self.convert(file, key, dict(entries[key]), env, algo))
            skipped.update((key, file) for key in entries if key not in matched)
        report += skipped_entries(skipped)
        return made

    def convert(self, file: str, key: str, entry: dict[str, Any], env: EnvConfig, algo: str) -> Preset:
        """One Zoo entry as the preset ``<env>_<algo>``."""
        cfg = self.compose(f"env={env.name}", f"algo={algo}", "~tuned")
        draft = Draft(cfg, env, entry, models.algo_class(cfg), *self.env_spaces(cfg))
        tree: dict[str, Any] = {"total_timesteps": int(entry["n_timesteps"])}
        for name, value in entry.items():
            try:
                if name != "n_timesteps" and not draft.env_key(name, value):
                    draft.algo_key(name, value)
            except Unconvertible as error:
                draft.skipped.append(f"{name}: {value!r} ({error})")
        draft.whole_rollout()
        draft.as_the_zoo_observes(key)
        if env.extra in SAMPLED_EVALUATION:
            tree["eval"] = {"deterministic": False}
            draft.comments["eval.deterministic"] = (
                f"sampled actions, as the Zoo evaluates {SAMPLED_EVALUATION[env.extra]} (and scored it)"
            )
        for node, content in (("env", draft.env), ("wrappers", draft.wrappers), ("algo", draft.algo)):
            if content:
                tree[node] = content
        header = self.header(file, key, env, algo, tree["total_timesteps"], draft.skipped)
        return Preset(
            f"{env.name}_{algo}", "\n".join([*header, *yaml_text(tree, draft.comments)]) + "\n", draft.skipped
        )

    def header(self, file: str, key: str, env: EnvConfig, algo: str, budget: int, skipped: list[str]) -> list[str]:
        """The preset's first comment: what it configures, where it came from, its budget and the Zoo's score."""
        entry = "its atari entry (all Atari games)" if key == "atari" else f"entry {key}"
        source = (
            f"Preset for env={env.name} algo={algo}: RL Baselines3 Zoo's hyperparameters, the Zoo's values, not"
            f" re-verified here. From rl_zoo3 {self.version}, hyperparams/{file}, {entry}; rl_zoo3 is MIT-licensed,"
            " Copyright (c) 2019 Antonin Raffin."
        )
        paragraphs = []
        if key != "atari" and key != env.id:
            paragraphs.append(f"The Zoo tunes {key}; env={env.name} runs {env.id}: matched by name, not version.")
            if kwargs := V4_OBSERVATION.get(base_name(env.id)):
                given = ", ".join(f"{name}: {yaml_scalar(value)}" for name, value in kwargs.items())
                paragraphs.append(
                    f"env.kwargs {given} gives {env.id} the observation of {key} the values are tuned for"
                    f" ({V4_OBSERVATION_NOTE[base_name(env.id)]})."
                )
            if base_name(env.id) in V4_ONLY:
                paragraphs.append(V4_ONLY[base_name(env.id)])
        if env.extra in SAMPLED_EVALUATION:
            paragraphs.append(
                f"Evaluated with sampled actions (eval.deterministic: false), as the Zoo evaluates"
                f" {SAMPLED_EVALUATION[env.extra]} and measured its published score."
            )
        score = self.scores.get((file.removesuffix(".yml"), base_name(env.id)))
        published = "none for this pair."
        if score is not None:
            published = f"{score[1]} +- {score[2]} on {score[0]} after {score[3]} steps (one run, its benchmark.md)."
        paragraphs.append(
            f"Budget: {steps(budget)} steps (the Zoo's n_timesteps). The Zoo's published score: {published}"
        )
        if not skipped:
            paragraphs.append("Everything in the Zoo's entry is converted.")
        lines = [
            *wrap(source),
            f"{MARKER} (python -m tools.zoo_presets): change the converter, not this file.",  # one line: is_generated
            *(line for text in paragraphs for line in wrap(text)),
            *(f"Not converted: {item}" for item in skipped),
        ]
        return ["# @package _global_", *(f"# {line}" for line in lines)]


def wrap(text: str) -> list[str]:
    """A comment's text in lines that fit the repository's 120 columns after ``# ``."""
    return textwrap.wrap(text, width=118, break_on_hyphens=False)


def write(presets: list[Preset], out: Path, tuned: Path, report: list[str]) -> list[Path]:
    """Write the presets into ``out``, keeping the presets of ``tuned`` that this converter did not write, and
    removing generated files of ``out`` no pair produces any more. Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for preset in presets:
        kept = tuned / f"{preset.name}.yaml"
        if kept.exists() and not is_generated(kept):
            report.append(f"kept: verified preset {kept.name} (the Zoo's values for this pair are not written)")
            continue
        path = out / f"{preset.name}.yaml"
        path.write_text(preset.text)
        written.append(path)
        report += [f"{preset.name}: not converted: {item}" for item in preset.not_converted]
    for path in sorted(out.glob("*.yaml")):
        if path not in written and is_generated(path):
            path.unlink()
            report.append(f"removed: {path.name} (no Zoo entry or config for this pair any more)")
    return written


def main(argv: list[str] | None = None) -> int:
    """Convert, write, report; with ``--presets-page``, rewrite docs/presets.md's table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CONF / "tuned", help="folder to write (default: conf/tuned)")
    parser.add_argument("--presets-page", action="store_true", help="rewrite docs/presets.md's table from conf/tuned")
    args = parser.parse_args(argv)
    report: list[str] = []
    with composer() as compose:
        presets = Converter(CONF, compose).presets(report)
    written = write(presets, args.out, CONF / "tuned", report)
    print("\n".join([*report, f"wrote {len(written)} presets to {args.out}"]))
    if args.presets_page:
        zoo_readme.update(REPO / "docs" / "presets.md", CONF / "tuned")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
