"""Maintainers' scripts, run by hand (never at install or run time): e.g. the RL Zoo preset converter."""
