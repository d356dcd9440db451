"""The SB3 ``VecEnv`` that the batched envs share: seeding, time limits, auto-reset and infos.

A batched env keeps the state of all its copies in numpy arrays and steps them with array operations. What
the single env does per copy, this class does for all of them, with SB3's conventions (those of
``DummyVecEnv``): an episode that ends is reset in the same step, its last observation goes into
``info["terminal_observation"]``, ``info["TimeLimit.truncated"]`` says whether the time limit (not the task)
ended it, and ``info["is_success"]`` whether it succeeded. Infos are built only for the copies that finished;
the others share one empty dict per step, which SB3 only reads.

Randomness mirrors the single env: copy ``i`` has its own generator, made by Gymnasium's ``seeding.np_random``
from ``seed + i`` exactly as ``Env.reset(seed=...)`` makes it, and its starting states are drawn from it with
the single env's calls. So for the same seed the copies start where ``DummyVecEnv``'s copies start, episode
after episode. Draws made at every step for all copies at once (RoomToy's noise) come from one further
generator, seeded from the copies' seeds.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium.utils import seeding
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

# Float64 ulps within which ``sqrt(x * x + y * y)`` and ``math.hypot`` (the single envs') are of each other: both
# are within about one ulp of the exact value; this window leaves a wide margin.
_WINDOW = 64
_LOW29 = (1 << 29) - 1  # the float64 mantissa bits that rounding to float32 drops
_HALF = 1 << 28  # those bits at a float32 midpoint, where the rounding is in doubt
_TINY = int(np.float64(1e-150).view(np.int64))  # below, x * x may underflow: math.hypot decides
_FEW = 64


def python_norms(offsets: npt.NDArray[np.float64], threshold: float) -> npt.NDArray[np.float64]:
    """``math.hypot(x, y)`` of each row ``(x, y)``, as the single envs compute it, at the speed of array arithmetic.

    ``sqrt(x * x + y * y)`` and Python's ``math.hypot`` differ in the last bit for about 16% of pairs
    (``np.hypot`` for 0.6%, at three times the cost). Rewards (float32) and the comparison with ``threshold``
    only see the difference when the distance is within a few ulps of a float32 rounding midpoint or of
    ``threshold``, so exactly those rows are recomputed by ``math.hypot`` (found from the float64 bits): the
    float32 rewards and the flags derived from the result are the single env's (the float64 distances may
    differ in their last bit).
    """
    if len(offsets) <= _FEW:  # a few finished copies: math.hypot itself is quicker than the arithmetic below
        return np.array(list(map(math.hypot, *offsets.T.tolist())), dtype=np.float64)
    x, y = offsets[:, 0], offsets[:, 1]
    distance = x * x
    distance += y * y
    np.sqrt(distance, out=distance)
    bits = distance.view(np.int64)
    near_midpoint = np.bitwise_and(bits - (_HALF - _WINDOW), _LOW29) <= 2 * _WINDOW
    near_threshold = (bits - (int(np.float64(threshold).view(np.int64)) - _WINDOW)).view(np.uint64) <= 2 * _WINDOW
    doubtful = near_midpoint | near_threshold | (bits < _TINY)
    for i in doubtful.nonzero()[0].tolist():
        distance[i] = math.hypot(*offsets[i].tolist())
    return distance


def clip(values: npt.NDArray[Any], low: float, high: float) -> npt.NDArray[Any]:
    """``values`` clipped to ``[low, high]`` in place, as the single envs' comparisons clip (two ufunc calls)."""
    np.maximum(values, low, out=values)
    return np.minimum(values, high, out=values)


class BatchedVecEnv(VecEnv):
    """``num_envs`` copies of one rlrun env stepped together; a subclass implements the env's dynamics.

    Arguments past ``max_episode_steps`` are the single env's constructor arguments: a single env built with
    them (``self.single``) checks them and provides the spaces, the parameters and pure methods such as
    ``compute_reward``. ``get_attr`` reads the single env's attributes (the same for every copy);
    ``env_method`` calls the methods named in ``shared_methods``, computed once for all copies. There is no
    rendering: evaluation and videos use the single envs.
    """

    single_class: ClassVar[type[gym.Env[Any, Any]]]
    shared_methods: ClassVar[tuple[str, ...]] = ()
    draws_per_refill: ClassVar[int] = 32  # start draws taken from a copy's generator at once
    # Whether the copies replay DummyVecEnv over gym.make step for step for the same seed and actions (False
    # where steps draw for all copies at once, so only the first starts and the distributions agree).
    replays_gym: ClassVar[bool] = True

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        """Check the arguments with the single env and allocate the state of ``num_envs`` copies."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be an integer >= 1 or None, got {max_episode_steps!r}")
        if kwargs.get("render_mode") is not None:
            raise ValueError("batched envs do not render; render the single env (gym.make) instead")
        self.single = self.single_class(**kwargs)
        super().__init__(int(num_envs), self.single.observation_space, self.single.action_space)
        self.max_episode_steps = max_episode_steps
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self.copy_rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self.batch_rng = np.random.default_rng()
        self.actions: npt.NDArray[Any] | None = None
        # Start draws made ahead, per copy: row i holds draws_per_refill draws of copy i's generator, used in
        # order. Drawing k items at once gives the k items that k calls give, so the starts are the same.
        self.draws: npt.NDArray[Any] | None = None
        self.draws_used = np.full(self.num_envs, self.draws_per_refill, dtype=np.int64)

    # -- what a subclass implements -------------------------------------------------------------------------

    @abstractmethod
    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[Any]:
        """``count`` items of the single env's start draws (shape ``(count, ...)``), as its calls make them."""

    @abstractmethod
    def start(self, indices: npt.NDArray[np.intp]) -> None:
        """Put the copies ``indices`` at new starting states, from :meth:`take` as the single env's reset."""

    @abstractmethod
    def advance(self, actions: npt.NDArray[Any]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Step every copy by its (checked) action; return the rewards and the terminated flags."""

    @abstractmethod
    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> VecEnvObs:
        """The observations of all copies, or of ``indices``, as new arrays (never views of the state)."""

    @abstractmethod
    def copy_infos(self, indices: npt.NDArray[np.intp]) -> list[dict[str, Any]]:
        """The single env's ``info`` for each copy in ``indices``, in its current state."""

    @abstractmethod
    def check_actions(self, actions: Any) -> npt.NDArray[Any]:
        """The actions as an array with one row per copy; ``ValueError`` for what the single env refuses."""

    def start_from_options(self, index: int, options: dict[str, Any]) -> bool:
        """Apply ``reset`` options to copy ``index``; whether they set its state. The default ignores them."""
        return False

    def take(self, indices: npt.NDArray[np.intp]) -> npt.NDArray[Any]:
        """The next start draw of each copy in ``indices`` (distinct), refilling from its generator as needed."""
        refill = self.draws_per_refill
        for index in indices[self.draws_used[indices] >= refill].tolist():
            rng = self.copy_rngs[index]
            assert rng is not None, "step() before reset()"
            items = self.draw(rng, refill)
            if self.draws is None:
                self.draws = np.empty((self.num_envs, *items.shape), dtype=items.dtype)
            self.draws[index] = items
            self.draws_used[index] = 0
        assert self.draws is not None
        items = self.draws[indices, self.draws_used[indices]]
        self.draws_used[indices] += 1
        return items

    # -- SB3's VecEnv ---------------------------------------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Reset every copy; copy ``i`` is reseeded when ``seed()`` gave it a seed since the last reset."""
        given = [seed for seed in self._seeds if seed is not None]
        if given:
            self.batch_rng = np.random.default_rng([*given, self.num_envs])
        for index, seed in enumerate(self._seeds):
            if seed is not None or self.copy_rngs[index] is None:
                self.copy_rngs[index] = seeding.np_random(seed)[0]
                self.draws_used[index] = self.draws_per_refill  # draws of the old generator are dropped
        drawn = [i for i, opts in enumerate(self._options) if not (opts and self.start_from_options(i, opts))]
        self.start(np.array(drawn, dtype=np.intp))
        self.elapsed[:] = 0
        self.reset_infos = self.copy_infos(np.arange(self.num_envs))
        self._reset_seeds()
        self._reset_options()
        return self.observe()

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the actions; ``step_wait`` steps all copies."""
        self.actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step all copies, reset those whose episode ended, and return SB3's four values."""
        rewards, terminated = self.advance(self.check_actions(self.actions))
        self.elapsed += 1
        dones = terminated
        if self.max_episode_steps is not None:
            truncated = self.elapsed >= self.max_episode_steps
            dones = terminated | truncated
        no_info: dict[str, Any] = {}
        infos = [no_info] * self.num_envs
        finished = dones.nonzero()[0]
        if finished.size:
            self._finish(finished, terminated, infos)
        return self.observe(), rewards, dones, infos

    def _finish(self, finished: npt.NDArray[np.intp], terminated: npt.NDArray[np.bool_], infos: list[Any]) -> None:
        """Fill the infos of the finished copies (before their reset) and reset them."""
        terminal = self.observe(finished)
        rows: list[Any]
        if isinstance(terminal, dict):
            rows = [dict(zip(terminal, values, strict=True)) for values in zip(*terminal.values(), strict=True)]
        else:
            rows = list(terminal)
        ended = zip(finished.tolist(), self.copy_infos(finished), rows, terminated[finished].tolist(), strict=True)
        for index, info, row, term in ended:
            info["TimeLimit.truncated"] = not term
            info["terminal_observation"] = row
            infos[index] = info
        self.start(finished)
        self.elapsed[finished] = 0

    def close(self) -> None:
        """Nothing to release: the state is plain arrays."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The single env's attribute (a parameter, a space), the same for every copy."""
        value = getattr(self.single, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Not supported: the copies share their parameters; build a new batched env instead."""
        raise AttributeError(
            f"set_attr({attr_name!r}): the copies of a batched env share their parameters; build a new one "
            "with the arguments you need"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of ``shared_methods`` once and return its result for each copy in ``indices``."""
        if method_name not in self.shared_methods:
            raise AttributeError(
                f"{type(self).__name__} has no per-copy method {method_name!r}; env_method supports "
                f"{list(self.shared_methods)}"
            )
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """Always False: the copies are not Gymnasium envs, so no Gymnasium wrapper is around them."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Not supported: render the single env (``gym.make(id, render_mode=...)``) instead."""
        raise NotImplementedError("batched envs do not render; render the single env (gym.make) instead")

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """Not supported: render the single env (``gym.make(id, render_mode=...)``) instead."""
        raise NotImplementedError("batched envs do not render; render the single env (gym.make) instead")
