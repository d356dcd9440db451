"""rlrun's SLURM launcher (``hydra/launcher=slurm``): hydra-submitit-launcher's, following the jobs with ``squeue``
where SLURM keeps no accounting (needs the slurm extra)."""
