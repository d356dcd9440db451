"""The names tracking gives files and variables, importable without MLflow, SB3 or torch (a sweep's jobs and
its own process read them before anything heavy is imported)."""

# A sweep's (or study's) tracking record, in its folder: what each logger's start_group returned
GROUP_FILE = "tracking.json"
# Names that file for a run started as a process of its own (an rlrun-tune trial's seeds)
GROUP_VARIABLE = "RLRUN_TRACKING_GROUP"
# In a run folder: the operations a run could not send, one JSON object a line (rlrun-track sync sends them)
UNSENT_NAME = "tracking-unsent.jsonl"
