"""Make what a run trains from its config, as ``gym.make`` and SB3's ``make_vec_env`` do: the envs (wrapped,
vectorised, seeded; numpy-batched with ``env.vectorization=native``; :mod:`.vec_envs`) and the SB3 model
(:mod:`.models`). With the tracker factory (:mod:`rlrun.track.loggers`), the only place that calls
:func:`hydra.utils.instantiate`.

Imports :mod:`rlrun.config`, :mod:`rlrun.record`, :mod:`rlrun.startup` and :mod:`rlrun.envs`.
"""
