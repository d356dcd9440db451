"""Every console entry of rlrun: ``rlrun`` (:mod:`.main`), ``rlrun-check``, ``rlrun-envs``, ``rlrun-eval``,
``rlrun-table`` and ``rlrun-tune``.

Each reads its command line once, installs the start-up measures (:mod:`rlrun.startup.bootstrap`) and calls
into the layers below. May import every other subpackage; nothing imports it.
"""
