"""``python -m rlrun``: the same command as the ``rlrun`` console script (:mod:`rlrun.cli.main`)."""

from rlrun.cli.main import main

if __name__ == "__main__":
    main()
