"""Build what a run trains from its config: the envs (wrapped, vectorised, seeded; numpy-batched with
``env.vectorization=native``) and the SB3 model. The only place that calls :func:`hydra.utils.instantiate`.

Imports :mod:`rlrun.config`, :mod:`rlrun.record`, :mod:`rlrun.process` and :mod:`rlrun.envs`.
"""
