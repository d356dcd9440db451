"""The names tracking gives files, importable without MLflow, SB3 or torch."""

# A sweep's (or study's) tracking record, in its folder: what each logger's start_group returned
GROUP_FILE = "tracking.json"
# In a run folder: the operations a run could not send, one JSON object a line (rlrun-track sync sends them)
UNSENT_NAME = "tracking-unsent.jsonl"
