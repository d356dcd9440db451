"""Formats of a run folder's files (DESIGN.md, "The run-directory contract"), importable without torch."""

EVAL_CSV_HEADER = "timesteps,mean_return,std_return,success_rate,wall_s\n"
