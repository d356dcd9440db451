"""Tracking services a run also logs to, chosen with the ``logger`` config group: MLflow, W&B and CSV, and
``rlrun-track sync`` (re-sending what did not reach a service, importing runs trained without it).

Imports ``config`` and ``record`` only; ``run`` and ``sweep`` call it. Nothing of MLflow or W&B is imported
unless a run asks for that logger.
"""
