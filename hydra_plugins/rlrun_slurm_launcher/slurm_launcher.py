"""``hydra/launcher=slurm``'s class where Hydra looks for it: Hydra accepts plugin classes only from modules under
``hydra_plugins`` and imports each of them when it starts, a single run too, so this imports submitit and rlrun's
sweep only when a sweep launches (:mod:`rlrun.sweep.slurm_queue` says what it changes and why), and defines nothing
where the slurm extra (hydra-submitit-launcher) is not installed, so that Hydra's scan stays quiet there."""

import sys
from collections.abc import Sequence
from typing import Optional

from hydra.core.utils import JobReturn

try:
    from hydra_plugins.hydra_submitit_launcher import submitit_launcher
except ImportError:  # no slurm extra: hydra/launcher=slurm's own defaults (submitit_slurm) say what is missing
    submitit_launcher = None


class RlrunSlurmLauncher(submitit_launcher.SlurmLauncher if submitit_launcher else object):  # type: ignore[misc]
    """hydra-submitit-launcher's SLURM launcher; on a cluster without accounting, it says so once and follows the
    jobs with ``squeue`` instead of ``sacct``."""

    accounting: Optional[str] = None  # noqa: UP045  what sacct said when it did not answer; None: it answers
    asked = False

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        """Submit the jobs and wait for them, as the plugin does (sacct asked once per sweep)."""
        from rlrun.sweep.slurm_queue import accounting_error, followed_through_the_queue

        if not self.asked:  # once per sweep, however many batches it launches
            self.asked, self.accounting = True, accounting_error()
            if self.accounting is not None:
                print(
                    f"rlrun: SLURM keeps no accounting here (sacct: {self.accounting}): the sweep follows its "
                    "jobs with squeue",
                    file=sys.stderr,
                    flush=True,
                )
        with followed_through_the_queue(self.accounting):
            return super().launch(job_overrides, initial_job_idx)
