"""Where a step of SB3's SAC goes, with RL Zoo's Pendulum-v1 hyperparameters and one torch thread.

``python -m benchmarks.speed.sac_profile [STEPS]`` trains 300 warm-up steps, then profiles ``STEPS`` more (default
1,500) under cProfile and prints the total and the parts BENCHMARKS.md's Zoo notes name: autograd's backward,
the linear layers' forward, torch's Adam and the switches between train and eval mode. cProfile slows Python
code more than torch's kernels, so the shares are rough. Not part of the suite: a diagnosis, not a goal.
"""

from __future__ import annotations

import cProfile
import pstats
import sys

PARTS = {
    "autograd backward": ("run_backward", None),
    "linear layers, forward": ("linear", None),
    "Adam (torch's single-tensor path)": ("_single_tensor_adam", "adam.py"),
    "train/eval mode switches": ("train", "module.py"),
}


def _is(name: str, file: str | None, path: str, func: str) -> bool:
    """Whether a cProfile entry is ``name`` (a Python function in ``file``, or a built-in whose label holds it)."""
    if path == "~":  # torch's C functions: "<built-in method torch._C._nn.linear>", "<method 'run_backward' ...>"
        return f".{name}>" in func or f"'{name}'" in func
    return func == name and (file is None or path.endswith(file))


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    import torch
    from stable_baselines3 import SAC

    torch.set_num_threads(1)
    model = SAC("MlpPolicy", "Pendulum-v1", learning_rate=1e-3, seed=0)  # the Zoo's hyperparameters
    model.learn(300)
    profile = cProfile.Profile()
    profile.enable()
    model.learn(steps, reset_num_timesteps=False)
    profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in stats.values())
    print(f"{steps} SAC steps under cProfile: {total:.1f} s")
    for label, (name, file) in PARTS.items():
        cumulative = max(
            (cum for (path, _, func), (_, _, _, cum, _) in stats.items() if _is(name, file, path, func)), default=0.0
        )
        print(f"  {label}: {cumulative:.1f} s ({cumulative / total:.0%})")


if __name__ == "__main__":
    main()
