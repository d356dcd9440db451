# Hydra config groups shipped inside the package as rlrun.conf (see pyproject.toml).
