#!/usr/bin/env bash
# A real one-node Slurm on this machine, for the tests (tests/scaling/slurm_array_test.sh) and
# for trying vlbias's job arrays by hand. Usage: scripts/slurm_local.sh start|stop|status
#
# Debian 12's slurm-wlm (slurmctld, slurmd) and munge, installed by `scripts/setup.sh
# --test-deps`, run as root. Everything lives in one state folder of its own, $VLBIAS_SLURM_DIR
# (default /tmp/vlbias-slurm): a generated munge key and munged's socket, pid, seed and log;
# slurm.conf with this host (`hostname -s`) as the controller and the only node; slurmctld's
# state, slurmd's spool, the daemons' logs and pid files. Nothing under /etc, /run or /var is
# changed (Slurm still reads /etc/slurm/plugstack.conf: Debian's includes an empty folder).
# Commands that talk to it need the `export SLURM_CONF=...` line that start and status print.
#
# start: idempotent (a running cluster is left as it is); waits until sinfo shows the node idle,
#   and brings a node left DOWN or DRAINED back (scontrol update state=resume).
# stop: cancels the cluster's jobs, then ends only the daemons whose pid files this script
#   wrote; removes no file. The next start begins with no jobs.
# status: exit 0 if all three daemons run (and prints sinfo), 1 if not.
set -euo pipefail

dir=${VLBIAS_SLURM_DIR:-/tmp/vlbias-slurm}
start_timeout=${VLBIAS_SLURM_START_TIMEOUT:-60}
conf=$dir/slurm.conf
munge_dir=$dir/munge
munge_socket=$munge_dir/munge.socket
host=$(hostname -s)
export SLURM_CONF=$conf

die() {
  echo "slurm_local: $*" >&2
  exit 1
}

# Whether process $1 runs and is the program named $2 (a zombie does not count: the daemons
# are children of PID 1, which may reap them a second or two after they exit).
is_running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ "$stat" == "$1 ($2) "* ]] && [[ "$stat" != "$1 ($2) Z"* ]]
}

# The pid in pid file $1 if that process runs and is the program named $2, else nothing.
running_pid() {
  local file=$1 name=$2 pid
  [ -s "$file" ] || return 0
  pid=$(tr -dc '0-9' <"$file")
  if [ -n "$pid" ] && is_running "$pid" "$name"; then echo "$pid"; fi
  return 0
}

munged_pid() { running_pid "$munge_dir/munged.pid" munged; }
slurmctld_pid() { running_pid "$dir/run/slurmctld.pid" slurmctld; }
slurmd_pid() { running_pid "$dir/run/slurmd.pid" slurmd; }

log_tails() {
  local log
  for log in "$munge_dir/munged.log" "$dir/log/slurmctld.log" "$dir/log/slurmd.log"; do
    [ -f "$log" ] || continue
    echo "--- last lines of $log" >&2
    tail -n 25 "$log" >&2
  done
}

need() {
  command -v "$1" >/dev/null 2>&1 ||
    die "$1 not found: install Slurm and munge with scripts/setup.sh --deps-only --test-deps"
}

# The munge key: 1024 random bytes, owned by munge, mode 0400. Its folder is munge's, mode 0755:
# munged wants every folder above its socket searchable by all.
make_munge_key() {
  install -d -o munge -g munge -m 0755 "$munge_dir"
  [ -s "$munge_dir/munge.key" ] && return 0
  dd if=/dev/urandom of="$munge_dir/munge.key.new" bs=1024 count=1 status=none
  chown munge:munge "$munge_dir/munge.key.new"
  chmod 0400 "$munge_dir/munge.key.new"
  mv "$munge_dir/munge.key.new" "$munge_dir/munge.key"
}

# munged as the munge user, with every path of its own in $munge_dir (--socket, --key-file,
# --pid-file, --log-file, --seed-file): the system's munged, if any, is left alone.
start_munged() {
  [ -n "$(munged_pid)" ] && return 0
  make_munge_key
  rm -f "$munge_socket" "$munge_socket.lock"
  setsid runuser -u munge -- munged --socket="$munge_socket" --key-file="$munge_dir/munge.key" \
    --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" \
    --seed-file="$munge_dir/munged.seed" </dev/null >>"$munge_dir/munged.out" 2>&1 ||
    { log_tails; die "munged did not start (see $munge_dir/munged.out)"; }
  local waited=0
  until munge --socket="$munge_socket" -n </dev/null |
    unmunge --socket="$munge_socket" >/dev/null 2>&1; do
    waited=$((waited + 1))
    [ "$waited" -le 50 ] || {
      log_tails
      die "munged does not answer on $munge_socket after 5 s"
    }
    sleep 0.1
  done
}

# This host's memory in MB less a margin (5%, at least 256 MB): slurmd drains a node that
# reports less memory than RealMemory says.
real_memory_mb() {
  local total_mb
  total_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
  local margin=$((total_mb / 20))
  [ "$margin" -ge 256 ] || margin=256
  echo $((total_mb - margin))
}

write_conf() {
  local cpus memory
  cpus=$(nproc)
  memory=$(real_memory_mb)
  cat >"$conf.new" <<EOF
# Written by scripts/slurm_local.sh: a one-node Slurm on $host for vlbias's tests.
ClusterName=vlbias
# Loopback addresses: one node talks to itself, whether or not its name resolves.
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes tracked through /proc, tasks neither bound nor confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# A node that comes back with a valid configuration is usable again at once.
ReturnToService=2
# Array indices up to 100000 (vlbias's most shards, kMaxShards in include/vlbias/io/run/shard.h).
MaxArraySize=100001
MaxJobCount=200000
# scancel's SIGKILL 5 s after its SIGTERM (30 s by default).
KillWait=5
# The scheduler's main pass every second (60 s by default), at most every 0.1 s (2 s): the
# next array tasks and a job whose dependency is met start within a second.
SchedulerParameters=sched_min_interval=100000,sched_interval=1
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.new" "$conf"
}

# The node's state as sinfo prints it (idle, down*, drain, ...), or nothing if sinfo fails.
node_state() {
  sinfo --noheader --nodes="$host" --format=%T 2>/dev/null | head -n 1 || true
}

wait_idle() {
  local started=$SECONDS state resumed=0
  while true; do
    state=$(node_state)
    # sinfo may show a state slurmctld saved before a restart: slurmd must answer too.
    case "$state" in
      idle | mixed | allocated | completing)
        scontrol show slurmd >/dev/null 2>&1 && return 0
        ;;
      down* | drain* | fail*)
        if [ "$resumed" -eq 0 ] && [ -n "$(slurmd_pid)" ]; then
          scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi
        ;;
    esac
    if [ $((SECONDS - started)) -ge "$start_timeout" ]; then
      log_tails
      die "node $host is not idle after ${start_timeout} s" \
        "(sinfo says '${state:-nothing}'; conf $conf)"
    fi
    sleep 0.5
  done
}

start() {
  [ "$(id -u)" -eq 0 ] || die "start must run as root (slurmd runs the jobs as their users)"
  need munged
  need slurmctld
  need slurmd
  need sinfo
  install -d -m 0755 "$dir" "$dir/state" "$dir/spool" "$dir/log" "$dir/run"
  start_munged
  # A fresh slurm.conf unless a daemon already runs with the one there.
  if [ -z "$(slurmctld_pid)" ] && [ -z "$(slurmd_pid)" ]; then write_conf; fi
  [ -s "$conf" ] || die "a Slurm daemon runs but $conf is missing: run stop, then start"
  if [ -z "$(slurmctld_pid)" ]; then
    # -c: a start begins with no jobs. A job of an earlier run (one that was launching when
    # stop came, or a session that ended without stop) would else be "running" for minutes
    # on a node that does not have it, holding its CPU.
    setsid slurmctld -c -f "$conf" </dev/null >>"$dir/log/slurmctld.out" 2>&1 ||
      { log_tails; die "slurmctld did not start (see $dir/log/slurmctld.out)"; }
  fi
  if [ -z "$(slurmd_pid)" ]; then
    setsid slurmd -f "$conf" -N "$host" </dev/null >>"$dir/log/slurmd.out" 2>&1 ||
      { log_tails; die "slurmd did not start (see $dir/log/slurmd.out)"; }
  fi
  wait_idle
  echo "slurm_local: node $host is $(node_state); for sbatch, squeue, sinfo and scancel:"
  echo "export SLURM_CONF=$conf"
}

# Sends SIGTERM to the pid in pid file $1 (program $2) and waits up to 10 s for it to end.
stop_daemon() {
  local pid
  pid=$(running_pid "$1" "$2")
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  local waited=0
  while is_running "$pid" "$2"; do
    waited=$((waited + 1))
    if [ "$waited" -gt 100 ]; then
      echo "slurm_local: $2 ($pid) still runs after 10 s; sending SIGKILL" >&2
      kill -9 "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  echo "slurm_local: stopped $2 ($pid)"
}

# Cancels every job of this cluster and waits (up to 15 s) until none is left: the daemons then
# stop with no job half launched.
cancel_jobs() {
  [ -n "$(slurmctld_pid)" ] || return 0
  local jobs
  jobs=$(squeue --noheader --format=%A 2>/dev/null | sort -u) || return 0
  [ -n "$jobs" ] || return 0
  # shellcheck disable=SC2086 # one id a word
  scancel $jobs 2>/dev/null || true
  echo "slurm_local: cancelled jobs ${jobs//$'\n'/ }"
  local waited=0
  while [ -n "$(squeue --noheader --format=%A 2>/dev/null)" ] && [ "$waited" -lt 150 ]; do
    waited=$((waited + 1))
    sleep 0.1
  done
}

stop() {
  cancel_jobs
  stop_daemon "$dir/run/slurmd.pid" slurmd
  stop_daemon "$dir/run/slurmctld.pid" slurmctld
  stop_daemon "$munge_dir/munged.pid" munged
}

status() {
  local name pid all=0
  for name in munged slurmctld slurmd; do
    pid=$("${name}_pid")
    if [ -n "$pid" ]; then echo "$name: running ($pid)"; else
      echo "$name: not running"
      all=1
    fi
  done
  if [ "$all" -eq 0 ]; then
    sinfo
    echo "export SLURM_CONF=$conf"
  fi
  return "$all"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: scripts/slurm_local.sh start|stop|status" \
    "(state folder: \$VLBIAS_SLURM_DIR, now $dir)" ;;
esac
