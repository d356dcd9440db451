"""``hydra/sweeper=rlrun`` where Hydra looks for it: Hydra accepts plugin classes only from modules under
``hydra_plugins``, and imports each of them when it starts, a single run too. So this is a thin ``Sweeper`` that
imports rlrun's sweeper (:mod:`rlrun.sweep.sweeper`) only when a sweep is set up."""

from typing import Any, Optional

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class RlrunSweeper(Sweeper):
    """rlrun's sweeper (:class:`rlrun.sweep.sweeper.RlrunSweeper`), under the name Hydra instantiates."""

    def __init__(
        self,
        max_batch_size: Optional[int] = None,  # noqa: UP045  (settings: hydra_plugins/rlrun_sweeper/config.py)
        params: Optional[dict[str, str]] = None,  # noqa: UP045
        stale_after_s: float = 600.0,
    ) -> None:
        self.settings: dict[str, Any] = {"max_batch_size": max_batch_size, "params": params}
        self.settings["stale_after_s"] = stale_after_s
        self.sweeper: Any = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        """Make rlrun's sweeper, which wraps each job around ``task_function``."""
        from rlrun.sweep import sweeper

        self.sweeper = sweeper.RlrunSweeper(**self.settings)
        self.sweeper.setup(hydra_context=hydra_context, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> Any:
        """Plan, launch and record the sweep (:meth:`rlrun.sweep.sweeper.RlrunSweeper.sweep`)."""
        return self.sweeper.sweep(arguments)
