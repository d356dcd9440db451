"""Every console entry of rlrun: ``rlrun`` (:mod:`.main`), ``rlrun-check``, ``rlrun-envs``, ``rlrun-eval``,
``rlrun-table``, ``rlrun-tune``, ``rlrun-track`` and ``rlrun-trust``.

Each reads its command line once and calls into the layers below (``rlrun`` pauses the garbage collector while
it starts: :mod:`rlrun.startup.bootstrap`). May import every other subpackage; nothing imports it.
"""
