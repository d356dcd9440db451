"""An installed env package that fails to import, as safety-gymnasium does under a Gymnasium without the module it
imports: tests list it among the env packages rlrun tries (``rlrun.make.gym_make.THIRD_PARTY``)."""

import gymnasium.envs.no_such_module  # noqa: F401  (the failure)
