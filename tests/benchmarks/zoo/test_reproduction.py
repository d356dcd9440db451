"""The RL Zoo reproduction (conf/benchmark/zoo.yaml, benchmarks/zoo/reproduction.py): its parts, keeping a part's
results, and its section of BENCHMARKS.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from benchmarks.zoo.reproduction import CONFIG, differences, keep, parts, write_reproduction
from rlrun.config.errors import UserError
from rlrun.table.runs import Run, read_run
from rlrun.table.write import write_tables
from tests.rlrun.helpers import compose_config
from tests.rlrun.table.helpers import make_run

PAIRS = CONFIG.parent / "zoo_pair"


def test_parts_hold_every_pair_once_and_each_pair_evaluates_every_tenth_of_its_budget() -> None:
    listed = parts()
    pairs = [pair for part in listed.values() for pair in part]
    # each file in exactly one part, but a pair's backend variant (cartpole_dqn_jax: the zoo_jax user-level figure)
    files = sorted(p.stem for p in PAIRS.glob("*.yaml") if not p.stem.endswith("_jax"))
    assert sorted(pairs) == files
    composed = compose_config("+benchmark=zoo").benchmark.parts
    assert {part: composed[part].split(",") for part in listed} == listed
    assert composed["all"].split(",") == pairs
    for pair in pairs:
        cfg = compose_config("+benchmark=zoo", f"+benchmark/zoo_pair={pair}")
        assert cfg.eval.every * 10 == cfg.total_timesteps, pair


@pytest.fixture(scope="module")
def tiny_part(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Part 1 of the benchmark, shrunk: Acrobot A2C, seeds 0 and 1, 160 steps, a snapshot half-way."""
    cwd = tmp_path_factory.mktemp("bench")
    tiny = ["total_timesteps=160", "eval.every=80", "eval.episodes=1", "eval.n_envs=1", "eval.final_episodes=2"]
    command = ["+benchmark=zoo", "benchmark.part=1", "benchmark.parts.1=acrobot_a2c", "seed=0,1", *tiny]
    command += ["snapshot.every=80", "progress_bar=false"]
    subprocess.run([sys.executable, "-m", "rlrun", "-m", *command], cwd=cwd, check=True, capture_output=True)
    return cwd / "outputs/sweeps/zoo-1"


def _files(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


def test_keep_copies_only_what_the_table_reads_and_gives_the_same_table(tiny_part: Path, tmp_path: Path) -> None:
    kept = keep(tiny_part, tmp_path / "kept")
    assert kept == tmp_path / "kept/zoo-1"
    runs = [f"acrobot-a2c/total_timesteps-160/seed-{seed}/" for seed in (0, 1)]
    assert _files(kept) == {"sweep.json"} | {
        run + name for run in runs for name in ("run.json", "config.yaml", "eval.csv", "run-manifest.json")
    }
    left = _files(tiny_part) - _files(kept)  # what the sweep holds besides: models, snapshots, TensorBoard, logs
    assert {runs[0] + "model.zip", runs[0] + "rlrun.log", runs[0] + ".hydra/config.yaml"} <= left
    assert any("/snapshots/" in name for name in left) and any("/tb/" in name for name in left)
    tables = [write_tables([folder], tmp_path / name).read_bytes() for folder, name in ((tiny_part, "a"), (kept, "b"))]
    assert tables[0] == tables[1] and b"`acrobot-a2c` | 2/2 |" in tables[0]
    (kept / "stale.txt").write_text("from an earlier copy")
    assert not (keep(tiny_part, tmp_path / "kept") / "stale.txt").exists()  # keeping again replaces the copy
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["zoo-1"]  # no staging folder left


def test_keep_refuses_a_sweep_without_its_record(tmp_path: Path) -> None:
    make_run(tmp_path / "zoo-1/acrobot-a2c/seed-0", 0, -90.0)
    with pytest.raises(UserError, match="no readable sweep.json"):
        keep(tmp_path / "zoo-1", tmp_path / "kept")
    assert not (tmp_path / "kept/zoo-1").exists()


def _part(folder: Path, pairs: dict[str, tuple[tuple[str, str], list[float], int]]) -> None:
    """A kept part by hand: per pair (env, env id), its seeds' final returns and the budget."""
    jobs = []
    for pair, (env, scores, budget) in pairs.items():
        algo = pair.rsplit("_", 1)[1]
        for seed, score in enumerate(scores):
            run = f"{env[0]}-{algo}/seed-{seed}"
            overrides = [f"+benchmark/zoo_pair={pair}"]
            make_run(folder / run, seed, score, env=env, algo=algo, total_timesteps=budget, overrides=overrides)
            jobs.append({"folder": run, "status": "completed", "wall_s": 20.0})
    times = {"started": "2026-11-24T03:00:00+0000", "ended": "2026-11-24T03:41:00+0000"}
    counts = {"planned": len(jobs), "completed": len(jobs)}
    (folder / "sweep.json").write_text(json.dumps({"sweep": folder.name, **times, "counts": counts, "jobs": jobs}))


BENCHMARKS_MD = """# Benchmarks

<!-- rlrun:begin zoo -->
speed
<!-- rlrun:end zoo -->

What the speed figures say.

<!-- rlrun:begin startup -->
start-up
<!-- rlrun:end startup -->
"""


def test_section_has_a_row_per_pair_with_the_zoos_figure_and_whether_it_lies_inside(tmp_path: Path) -> None:
    kept, md = tmp_path / "benchmarks/results/zoo_reproduction", tmp_path / "BENCHMARKS.md"
    _part(
        kept / "zoo-1",
        {  # the Zoo: MountainCar-v0 A2C -111.263 at 1M steps, Acrobot-v1 A2C -83.353 at 500k
            "mountaincar_a2c": (("mountaincar", "MountainCar-v0"), [-120.0, -115.0, -110.0, -105.0], 1_000_000),
            "acrobot_a2c": (("acrobot", "Acrobot-v1"), [-200.0, -190.0, -180.0, -170.0], 100_000),
        },
    )
    md.write_text(BENCHMARKS_MD)
    write_reproduction(kept, md)
    text = md.read_text()
    assert text.index("<!-- rlrun:end zoo -->") < text.index("What the speed") < text.index("rlrun:begin zoo_repro")
    assert text.index("<!-- rlrun:end zoo_reproduction -->") < text.index("<!-- rlrun:begin startup -->")
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| `")}
    mountaincar, acrobot = rows["| `mountaincar_a2c` (part 1)"], rows["| `acrobot_a2c` (part 1)"]
    assert "| -111.3 ± 24.1, 1,000,000 steps (Zoo 1.8.0) | inside |" in mountaincar
    assert "| -83.35 ± 17.21, 500,000 steps (Zoo 1.8.0) | **outside** |" in acrobot
    assert "| 100,000 | 4/4 | -185.0 [" in acrobot and "| -185.0 ± 11.2 |" in acrobot
    assert "- `acrobot_a2c`: budget: ours 100,000 steps, the Zoo's 500,000; the Zoo's figure is one agent's" in text
    assert "- `mountaincar_a2c`:" not in text  # no note where the Zoo's figure lies inside
    busy = 2 * (10 + 11 + 12 + 13) / 3600  # make_run's wall_s: 10 + seed
    head = "part 1 (mountaincar_a2c, acrobot_a2c): 8 of 8 runs completed, their wall times (run.json) adding up to"
    assert f"{head} {busy:.2f} h; its last invocation: 8 completed, wall time 41 min 00 s" in text
    for part, pairs in parts().items():
        if part != "1":
            assert f"- part {part} ({', '.join(pairs)}): **missing**" in text
    assert "| `a2c` | 2 | 8 |" in text and "](benchmarks/results/zoo_reproduction/profiles.png)" in text
    for name in ("table.md", "curves.png", "aggregate.md", "profiles.png", "aggregate.png"):
        assert (kept / name).is_file()
    write_reproduction(kept, md)
    assert md.read_text() == text  # written again: the same bytes, one section


def _run_with(folder: Path, extra: str, deterministic: bool) -> Run:
    """The run in ``folder`` with its config's env family and evaluation policy set."""
    config = yaml.safe_load((folder / "config.yaml").read_text())
    config["env"]["extra"], config["eval"] = extra, {"deterministic": deterministic}
    (folder / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(config)))
    return read_run(folder)


def test_what_differs_comes_from_the_configs_and_references(tmp_path: Path) -> None:
    references = yaml.safe_load((CONFIG.parent / "references.yaml").read_text())
    lunar = references["LunarLander-v3"]
    run = _run_with(make_run(tmp_path / "lunar", 0, 100.0, env=("lunarlander", "LunarLander-v3")), "box2d", False)
    assert differences(run, "LunarLander-v3", 200_000, lunar, lunar["algos"]["a2c"]) == [
        "env version: we run LunarLander-v3, the Zoo's figure is for LunarLander-v2",
        "evaluation: we evaluate with sampled actions, the Zoo with the deterministic policy",
    ]
    doorkey, env_id = references["MiniGrid-DoorKey-5x5-v0"], "minigrid:MiniGrid-DoorKey-5x5-v0"
    folder = make_run(tmp_path / "doorkey", 0, 0.5, env=("minigrid_doorkey_5x5", env_id))
    for deterministic, budget, expected in [
        (False, 100_000, []),  # as the Zoo: sampled actions on MiniGrid, its budget, the same env id
        (False, 50_000, ["budget: ours 50,000 steps, the Zoo's 100,000"]),
        (True, 100_000, ["evaluation: we evaluate with the deterministic policy, the Zoo with sampled actions"]),
    ]:
        run = _run_with(folder, "minigrid", deterministic)
        assert differences(run, env_id, budget, doorkey, doorkey["algos"]["ppo"]) == expected
