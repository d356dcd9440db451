"""rlrun's Hydra launcher on Ray's task API (``hydra/launcher=ray``): one Ray task per job.

Replaces hydra-ray-launcher, whose release pins ``cloudpickle<3`` (joblib 1.6 needs 3) and passes
``object_store_memory`` to ``ray.init``, which Ray refuses when joining a running cluster. Ray
schedules the jobs; this package only submits them and collects what they return.
"""
