"""Every console block of docs/ is the real output of its commands, run here and compared as the README's are
(tests/test_readme.py: numbers, run stamps and absolute paths aside; ``...`` stands for lines a page leaves out).

Each page's blocks run in order in a folder of their own, which the pages call ``/home/me/work``. A block whose
commands train more than a tiny budget is marked by the line ``<!-- slow -->`` before it and checked under
``pytest -m slow``; the others in the default run. ``python -m tests.test_docs docs/PAGE.md`` prints what each
command of a page prints here, to write its blocks from.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console_output import matches

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOME = "/home/me/work"  # the folder the pages' commands run in, as they show it
CLONE = "/home/me/rlrun"  # this clone, rlrun installed from it, as the pages show it
SLOW = "<!-- slow -->"
WANDB_ID = "qg9qndip"  # the W&B run id tracking.md shows (each run draws its own)
WANDB_IDS: set[str] = set()  # the ids the runs drew

# What some pages' commands need in their folder: a package whose env fails while made (errors.md), a config
# with broken YAML (errors.md), and a Python that lacks MuJoCo (envs.md: what a machine without the extra says).
FILES = {
    "myrobot/__init__.py": 'import gymnasium as gym\n\ngym.register("myrobot/Arm-v0", entry_point="myrobot.arm:Arm")\n',
    "myrobot/arm.py": "import gymnasium as gym\n\nfrom myrobot import helper\n\n\nclass Arm(gym.Env):\n"
    "    def __init__(self):\n        helper.load()\n",
    "myrobot/helper.py": 'def load():\n    bodies = []\n    assert bodies, "model robot.xml has no bodies"\n',
    "mine/env/broken.yaml": "# an env of mine\nid: CartPole-v1\nn_envs: 1\nwrappers: [a, b",
    "without/mujoco/sitecustomize.py": "import sys\n\nsys.modules['mujoco'] = None  # as if not installed\n",
}
WITHOUT = {"envs.md": "without/mujoco"}  # pages whose commands run on a Python without an extra's package
# Console blocks shown but not run here, each marked <!-- not run: why --> on the page: their output needs a state
# the pages' folder does not have (runs stopped by a signal, a run still training beside the command).
NOT_RUN = {
    ("runs.md", "rlrun-runs"),
    ("runs.md", "rlrun resume=outputs/runs/cartpole-ppo/2026-11-29_06-21-36-xxxx"),
    ("sweeps.md", "rlrun -m env=gridworld algo=ppo 'seed=range(8)' hydra/launcher=joblib sweep=demo"),
}


def page_blocks(text: str) -> list[tuple[bool, list[tuple[str, list[str]]]]]:
    """Each ```console block of a page that runs here: whether it is marked slow, and its commands with the lines
    under each (a block marked ``<!-- not run: why -->`` is left out: :data:`NOT_RUN` lists them)."""
    blocks = []
    for found in re.finditer(r"(?:^(<!-- slow -->|<!-- not run: .*?-->)\n)?```console\n(.*?)```", text, re.S | re.M):
        if (found.group(1) or "").startswith("<!-- not run"):
            continue
        commands: list[tuple[str, list[str]]] = []
        for line in found.group(2).splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands and commands[-1][0].endswith("\\"):  # a command continued on the next line
                commands[-1] = (commands[-1][0][:-1] + line.strip(), [])
            else:
                commands[-1][1].append(line)
        blocks.append((found.group(1) == SLOW, commands))
    return blocks


def prepare(folder: Path, page: str) -> dict[str, str]:
    """The folder's files and the environment a page's commands run with."""
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this install's scripts
    paths = [str(folder / WITHOUT[page])] if page in WITHOUT else []
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(folder), str(ROOT)])  # tests.rlrun.broken_envs, myrobot
    env.pop("HYDRA_FULL_ERROR", None)
    return env


def newest(folder: Path, pattern: str) -> str:
    """``outputs/runs/<env>-<algo>/<stamp>`` as the newest such run folder (relative), or as given."""
    runs = sorted((folder / "outputs" / "runs" / pattern).glob("*"))
    return str(runs[-1].relative_to(folder)) if runs else f"outputs/runs/{pattern}/<stamp>"


def run(command: str, folder: Path, env: dict[str, str], last: int) -> tuple[int, list[str]]:
    """Run one command of a page in ``folder``: its exit status and its lines as the page would show them."""
    if command == "echo $?":
        return 0, [str(last)]
    argv = re.sub(r"outputs/runs/([\w.-]+)/<stamp>", lambda m: newest(folder, m.group(1)), command)
    argv = re.sub(r"^python ", f"{sys.executable} ", argv)
    done = subprocess.run(argv, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    said = (done.stdout + done.stderr).replace(str(folder), HOME).replace(str(ROOT), CLONE)
    WANDB_IDS.update(re.findall(r"wandb: run (\w+) saved offline", said))
    for drawn in WANDB_IDS:  # a W&B run's id, drawn at random, as the page shows it
        said = said.replace(drawn, WANDB_ID)
    return done.returncode, re.sub(r"/\S*/site-packages/", ".../", said).splitlines()


def check_page(page: str, slow: bool, folder: Path) -> None:
    env = prepare(folder, page)
    status = 0
    for marked, commands in page_blocks((DOCS / page).read_text()):
        if marked != slow:
            continue
        for command, documented in commands:
            status, real = run(command, folder, env, status)
            assert matches(documented, real), (
                f"{page}: {command}\ndocumented:\n" + "\n".join(documented) + "\nreal:\n" + "\n".join(real)
            )


PAGES = sorted(path.name for path in DOCS.glob("*.md") if "```console" in path.read_text())


def test_the_pages_with_console_blocks() -> None:
    assert {"errors.md", "envs.md", "index.md", "runs.md", "sweeps.md", "tables.md", "tracking.md"} <= set(PAGES)
    bare = [
        f"{path.name}: {block.splitlines()[0]}"
        for path in DOCS.glob("*.md")
        for block in re.findall(r"^```\n(.*?)```", path.read_text(), re.S | re.M)
        if block.startswith("$ ")
    ]
    assert bare == [], "a block of commands and their output that is not a console block, so no test runs it"
    marked = {
        (path.name, block.splitlines()[0].removeprefix("$ "))
        for path in DOCS.glob("*.md")
        for block in re.findall(r"^<!-- not run: .+? -->\n```console\n(.*?)```", path.read_text(), re.S | re.M)
    }
    assert marked == NOT_RUN


@pytest.mark.parametrize("page", [p for p in PAGES if any(not s for s, _ in page_blocks((DOCS / p).read_text()))])
def test_every_console_block_prints_what_the_page_shows(page: str, tmp_path: Path) -> None:
    check_page(page, slow=False, folder=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if any(s for s, _ in page_blocks((DOCS / p).read_text()))])
def test_every_slow_console_block_prints_what_the_page_shows(page: str, tmp_path: Path) -> None:
    check_page(page, slow=True, folder=tmp_path)


if __name__ == "__main__":  # python -m tests.test_docs docs/PAGE.md [--slow]: the real output of a page's commands
    import tempfile

    name = Path(sys.argv[1]).name
    with tempfile.TemporaryDirectory() as tmp:
        env, status = prepare(Path(tmp), name), 0
        for marked, commands in page_blocks((DOCS / name).read_text()):
            if marked == ("--slow" in sys.argv) or "--all" in sys.argv:
                for command, _ in commands:
                    status, real = run(command, Path(tmp), env, status)
                    print("\n".join([f"$ {command}", *real]))
                print("-----")
