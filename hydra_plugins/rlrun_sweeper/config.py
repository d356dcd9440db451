"""``hydra/sweeper=rlrun``'s settings, stored in Hydra's ConfigStore when rlrun is imported.

Kept apart from the sweeper class: importing that class imports Hydra's basic sweeper, which Hydra's
plugin scan later executes again, so the class is imported only once the scan is done.
"""

# no `from __future__ import annotations`: Hydra's plugin scan may run this module outside sys.modules,
# where dataclasses cannot resolve string annotations
from dataclasses import dataclass
from typing import Optional

from hydra.core.config_store import ConfigStore


@dataclass
class RlrunSweeperConf:
    """The sweeper's settings (``hydra.sweeper.*``)."""

    _target_: str = "hydra_plugins.rlrun_sweeper.rlrun_sweeper.RlrunSweeper"
    max_batch_size: Optional[int] = None  # noqa: UP045  jobs handed to the launcher at once (None: all)
    params: Optional[dict[str, str]] = None  # noqa: UP045  sweep definitions, as for Hydra's basic sweeper
    # a `running` job of another host (whose pid cannot be checked) counts as dead once its run.json
    # was last updated this long ago (a live run rewrites it at least every minute)
    stale_after_s: float = 600.0


ConfigStore.instance().store(group="hydra/sweeper", name="rlrun", node=RlrunSweeperConf, provider="rlrun")
