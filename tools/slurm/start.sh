#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for rlrun's cluster tests (pytest -m cluster) and for trying
# hydra/launcher=slurm by hand: Debian's slurm-wlm and munge (installed with apt-get when missing), slurm.conf
# written for this host's name, cores and memory, accounting off (no slurmdbd, as on many small clusters),
# CPUs consumable (two 1-CPU jobs run at once), requeueing allowed. Run as root; running it again is harmless:
# daemons already answering are left as they are. tools/slurm/stop.sh stops them.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
    echo "tools/slurm/start.sh: run it as root (it installs packages and starts daemons): sudo $0" >&2
    exit 2
fi

CONF=/etc/slurm/slurm.conf
HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)  # 90%: slurmd drains a node with less

if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q slurm-wlm munge
fi

# munge: the key (the package usually makes one) and the daemon, as the munge user
if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --force
fi
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged --force
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

install -d -m 0755 /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /etc/slurm
wanted=$(mktemp)
cat > "$wanted" <<CONF
# Written by rlrun's tools/slurm/start.sh: a one-node cluster on ${HOST}.
ClusterName=rlrun
SlurmctldHost=${HOST}
SlurmUser=root
AuthType=auth/munge
# a requeued job waits cred_expire + 1 s before it may start again (120 s by default): 10 s keeps the tests short
AuthInfo=cred_expire=10
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# no cgroups (containers rarely allow them): processes tracked by their parent, tasks not bound
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
# CPUs are what jobs consume (memory is not): two 1-CPU jobs run at once on a 2-core machine
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# accounting off, as on many small clusters: no slurmdbd, so sacct has nothing to say
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# ended jobs leave squeue after 10 s; requeueing (submitit's scontrol requeue after a time limit) allowed
MinJobAge=10
JobRequeue=1
KillWait=30
NodeName=${HOST} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=${MEM_MB} State=UNKNOWN
PartitionName=debug Nodes=${HOST} Default=YES MaxTime=INFINITE State=UP
CONF
changed=0
if ! cmp -s "$wanted" "$CONF"; then
    install -m 0644 "$wanted" "$CONF"
    changed=1
fi
rm -f "$wanted"

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$changed" -eq 1 ]; then  # a new host name, core count or memory: daemons started before it start again
    for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
        if running "$pidfile"; then
            pid=$(cat "$pidfile")
            kill "$pid"
            for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    done
fi
running /run/slurmctld.pid || slurmctld
running /run/slurmd.pid || slurmd

# wait until the node is idle (or running jobs: mixed, allocated): ready for jobs
for _ in $(seq 120); do
    state=$(sinfo --noheader --nodes="$HOST" --format=%t 2>/dev/null || true)
    case "$state" in
        idle|mix|alloc) echo "SLURM is up: node $HOST ($CPUS CPUs, ${MEM_MB} MB), partition debug"; exit 0 ;;
        down*|drain*|fail*) scontrol update nodename="$HOST" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
done
echo "tools/slurm/start.sh: the node $HOST is not idle after 60 s (sinfo says '${state:-nothing}');" \
     "see /var/log/slurm/slurmctld.log and slurmd.log" >&2
exit 1
