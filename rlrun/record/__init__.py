"""The run-folder contract without torch (DESIGN.md, "The run-directory contract"): ``run.json``, ``eval.csv``,
``config.yaml``, provenance, whether a run is still alive, what Hydra leaves of a run that never started, and
snapshot manifests.

Imports only :mod:`rlrun.config`.
"""
