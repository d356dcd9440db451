"""Preloaded by the joblib fork server of a sweep, and imported nowhere else: each worker the server forks
watches the sweep's process (:mod:`rlrun.sweep.orphans`)."""

from rlrun.sweep import orphans

orphans.watch_forked_workers()
