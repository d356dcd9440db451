"""The run-folder contract without torch (DESIGN.md, "The run-directory contract"): ``run.json``, ``eval.csv``,
``config.yaml``, provenance, whether a run is still alive, and snapshot manifests.

Imports only :mod:`rlrun.config`.
"""
