"""What a config is: the structured schema, the one list of keys that do not change training, folder-name
resolvers, the user-mistake error type, and the upgrade of configs written by older versions of rlrun.

The bottom layer: imports nothing of rlrun's.
"""
