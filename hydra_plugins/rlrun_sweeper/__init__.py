"""rlrun's Hydra sweeper (``hydra/sweeper=rlrun``, the default in ``conf/config.yaml``)."""
