"""``torch._dynamo`` stays unloaded while nothing compiles, training gives the same parameters with the
stand-in as without it, and compiling or importing a dynamo submodule still works. Each case runs in a process
of its own: whether dynamo is loaded is a property of the whole process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rlrun.startup import lazy_dynamo

# The stand-in acts only on the torch versions it is tested on: on any other, these tests have nothing to test.
on_tested_torch = pytest.mark.skipif(
    not lazy_dynamo.tested_torch(), reason=f"torch is not one of {lazy_dynamo.TESTED_TORCH}: the stand-in stays off"
)

TRAIN = """\
import hashlib, json, sys
from rlrun.startup import lazy_dynamo
if sys.argv[1] == "stand-in":
    lazy_dynamo.install()
import torch
from stable_baselines3 import PPO, SAC

torch.set_num_threads(1)
digest = hashlib.sha256()
for cls, env, kwargs in (
    (PPO, "CartPole-v1", {"n_steps": 64, "batch_size": 32, "n_epochs": 2}),
    (SAC, "Pendulum-v1", {"learning_starts": 32, "batch_size": 16}),
):
    model = cls("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [16]}, **kwargs)
    model.learn(128)
    for name, tensor in model.policy.state_dict().items():
        digest.update(name.encode() + tensor.numpy().tobytes())
print(json.dumps({"loaded": lazy_dynamo.loaded(), "parameters": digest.hexdigest()}))
"""

COMPILE = """\
import sys
from rlrun.startup import lazy_dynamo
lazy_dynamo.install()
import torch

torch.manual_seed(0)  # the losses compared below depend on the initial weights: unseeded, it failed once in a full run
net = torch.nn.Linear(3, 1)
optimizer = torch.optim.Adam(net.parameters())  # its disabled methods were wrapped before dynamo loaded
{first}
def step(x):
    optimizer.zero_grad()
    loss = net(x).pow(2).sum()
    loss.backward()
    optimizer.step()
    return loss

eager = step(torch.ones(2, 3)).item()
compiled = torch.compile(step, backend="eager")(torch.ones(2, 3)).item()
import torch._dynamo.config, torch._dynamo.utils
assert lazy_dynamo.loaded()
assert sys.modules["torch._dynamo"] is torch._dynamo
assert torch._dynamo.utils is sys.modules["torch._dynamo.utils"]
assert torch._dynamo.utils.__spec__.name == "torch._dynamo.utils"
print(eager > compiled > 0)
"""


PROBES = """\
import inspect, pickle, sys
from rlrun.startup import lazy_dynamo
lazy_dynamo.install()
import cloudpickle, torch

nameless = eval("lambda: 0", {})  # no __module__: pickle and cloudpickle look for it in every module
pickle.whichmodule(nameless, "no_such_function")
cloudpickle.dumps(nameless)
inspect.getmodule(nameless)
assert not hasattr(torch._dynamo, "no_such_function")
print(lazy_dynamo.loaded(), callable(torch._dynamo.explain), lazy_dynamo.loaded())
"""


UNTESTED = """\
import sys
from rlrun.startup import lazy_dynamo
if sys.argv[1] == "untested":
    lazy_dynamo.TESTED_TORCH = ("2.0",)  # as if another torch were installed
installed = lazy_dynamo.install()
import torch

optimizer = torch.optim.Adam(torch.nn.Linear(3, 1).parameters())
optimizer.step()  # torch's optimizers import torch._dynamo
print(lazy_dynamo.tested_torch(), callable(torch._dynamo.graph_break), installed, lazy_dynamo.loaded())
"""


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@on_tested_torch
def test_training_leaves_dynamo_unloaded_with_the_same_parameters() -> None:
    with_stand_in = json.loads(_run(TRAIN, "stand-in"))
    plain = json.loads(_run(TRAIN, "plain"))
    assert with_stand_in["loaded"] is False
    assert plain["loaded"] is True  # torch's optimizers do import it: the stand-in is what keeps it out
    assert with_stand_in["parameters"] == plain["parameters"]


@on_tested_torch
@pytest.mark.parametrize(
    "first",
    [
        pytest.param("", id="compile-first"),
        pytest.param("from torch._dynamo.utils import counters", id="submodule-import-first"),
        pytest.param("torch._dynamo.config", id="attribute-first"),
    ],
)
def test_compiling_and_submodule_imports_load_the_real_module(first: str) -> None:
    assert _run(COMPILE.format(first=first)) == "True"


@on_tested_torch
def test_modules_probed_by_name_do_not_load_it() -> None:
    assert _run(PROBES) == "False True True"  # a name the real module has does load it


@pytest.mark.parametrize(
    ("torch_version", "out"),
    [
        pytest.param("tested", "True True True False", marks=on_tested_torch, id="tested-torch"),
        # left alone: torch's optimizers import the real module
        pytest.param("untested", "False True False True", id="untested-torch"),
    ],
)
def test_installed_on_the_tested_torch_only(torch_version: str, out: str) -> None:
    assert _run(UNTESTED, torch_version) == out
