"""``hydra/sweeper=rlrun`` where Hydra looks for it: Hydra accepts plugin classes only from modules under
``hydra_plugins``, so this subclass is the plugin; the sweeper itself is :mod:`rlrun.sweep.sweeper`."""

from rlrun.sweep import sweeper


class RlrunSweeper(sweeper.RlrunSweeper):
    """rlrun's sweeper (:class:`rlrun.sweep.sweeper.RlrunSweeper`), under the name Hydra instantiates."""
