#!/usr/bin/env bash
# Stops the one-node SLURM cluster tools/slurm/start.sh started (slurmd, slurmctld, munged); jobs still running
# are ended by slurmd's exit. Running it again is harmless.
set -euo pipefail

stop() {  # stop <pid file> <name>: SIGTERM, then wait up to 30 s for the process to go
    local pid
    [ -f "$1" ] && pid=$(cat "$1") && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid"
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || { echo "stopped $2"; return 0; }; sleep 0.1; done
    echo "tools/slurm/stop.sh: $2 (pid $pid) did not stop in 30 s" >&2
    return 1
}
scancel --full --quiet --state=RUNNING,PENDING --user="$(id -un)" 2>/dev/null || true
stop /run/slurmd.pid slurmd
stop /run/slurmctld.pid slurmctld
stop /run/munge/munged.pid munged
