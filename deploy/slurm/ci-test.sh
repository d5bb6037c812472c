#!/usr/bin/env bash
# CI: runs deploy/slurm/orchard-workers.sbatch on a real, single-node Slurm
# cluster started here by hand, against a real orchard coordinator on
# 127.0.0.1, and checks the answer and the workers' clean exits.
#
# Needs root and Debian (apt-get); no systemd. Everything it starts (munged,
# slurmctld, slurmd, the coordinator) lives in one temporary directory, uses
# its own socket and ports, and is stopped by PID at exit. Every wait has a
# timeout; the whole run takes about a minute once Slurm is installed.
#
#   bash deploy/slurm/ci-test.sh            # ORCHARD_BIN=... to test another binary
#   KEEP=1 bash deploy/slurm/ci-test.sh     # keep the temporary directory
#
# What it checks, with a coordinator that requires a bearer token:
#   1. a client without the token is refused, and the sbatch script refuses a
#      token file that others can read;
#   2. a 2-task array of workers (--cpus-per-task=1, the token from a file)
#      solves h'(4) (`hc --columns 4 --variant subsets`: h' = 47, 5 maximal
#      games) and counts every game of 24 moves or more (`--min-length 24`);
#   3. preemption: task 0 is cancelled while the second job runs; its worker
#      gets SIGTERM, hands back its units and exits 0. The coordinator's
#      lease TTL is 600 s, so units that were not handed back would stall the
#      job past its timeout, and the exact counts show none was lost or run
#      twice;
#   4. `scancel` of the rest: every worker exits 0 (slurmctld's log).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
t0=$SECONDS

log() { printf '[slurm-ci %3ds] %s\n' "$((SECONDS - t0))" "$*"; }

work=""
pids=()       # daemons we started, stopped in reverse order at exit
array_ids=()  # Slurm jobs we submitted

show_logs() {
    [[ -n "$work" && -d "$work" ]] || return 0
    local f
    for f in "$work"/log/*.log "$work"/out/*; do
        [[ -f "$f" ]] || continue
        echo "----- $f (last 60 lines)"
        tail -n 60 "$f"
    done
    if [[ -f "$work/slurm.conf" ]]; then
        echo "----- squeue"
        SLURM_CONF="$work/slurm.conf" timeout 10 squeue -a 2>&1 || true
        echo "----- sinfo"
        SLURM_CONF="$work/slurm.conf" timeout 10 sinfo -N -l 2>&1 || true
    fi
}

fail() {
    log "FAIL: $*"
    show_logs
    exit 1
}

# Whether PID is a worker of this test: `$bin worker ...` on its command line.
is_our_worker() {
    local argv
    [[ -r "/proc/$1/cmdline" ]] || return 1
    mapfile -d '' -t argv <"/proc/$1/cmdline" 2>/dev/null || return 1
    [[ ${#argv[@]} -ge 2 && "${argv[0]}" == "$bin" && "${argv[1]}" == worker ]]
}

# Stops a process we started: SIGTERM, up to $2 seconds, then SIGKILL.
stop_pid() {
    local pid=$1 grace=${2:-15} i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    log "pid $pid still alive after ${grace}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$? i
    trap - EXIT
    set +e
    if [[ -n "$work" && -f "$work/slurm.conf" && ${#array_ids[@]} -gt 0 ]]; then
        export SLURM_CONF="$work/slurm.conf"
        for id in "${array_ids[@]}"; do timeout 10 scancel "$id" 2>/dev/null; done
        # Let the workers hand back and slurmd reap them before slurmd goes.
        for ((i = 0; i < 60; i++)); do
            [[ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ]] && break
            sleep 0.5
        done
    fi
    # Any worker process still alive (slurmstepd outlives slurmd): by PID.
    if [[ -n "$work" && -f "$work/worker.pids" ]]; then
        while read -r pid; do
            # Checked again: the PID may have been reused since.
            [[ -n "$pid" ]] && is_our_worker "$pid" && stop_pid "$pid" 5
        done <"$work/worker.pids"
    fi
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        stop_pid "${pids[i]}" 15
        wait "${pids[i]}" 2>/dev/null
    done
    if [[ -n "$work" && -d "$work" ]]; then
        if [[ -n "${KEEP:-}" ]]; then
            log "kept $work"
        else
            rm -rf "$work"
        fi
    fi
    if ((rc == 0)); then
        log "PASS (${SECONDS}s)"
    else
        log "exit $rc"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND...: polls COMMAND every 0.5 s.
wait_for() {
    local what=$1 limit=$2 deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < deadline)) || fail "timed out after ${limit}s waiting for $what"
        sleep 0.5
    done
}

[[ $(id -u) -eq 0 ]] || fail "needs root (installs packages, runs slurmctld/slurmd as root)"

# --- 1. orchard, slurm, munge ------------------------------------------------
bin=${ORCHARD_BIN:-$repo/target/release/orchard}
if [[ ! -x "$bin" ]]; then
    log "building $bin (cargo build --release)"
    cargo build --release --bin orchard
fi
[[ -x "$bin" ]] || fail "$bin not found"
bin=$(realpath "$bin")
log "orchard: $bin ($("$bin" --version))"

need_pkgs=()
for p in slurm-wlm munge python3; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]} > 0)); then
    log "apt-get install ${need_pkgs[*]}"
    timeout 300 apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
        "${need_pkgs[@]}" >/dev/null
fi
for c in munged slurmctld slurmd sbatch squeue scancel scontrol python3; do
    command -v "$c" >/dev/null || fail "$c not found after installing slurm-wlm and munge"
done
log "slurm: $(slurmctld -V), munge: $(munged -V 2>&1 | head -n1)"

work=$(mktemp -d /tmp/orchard-slurm-ci.XXXXXX)
chmod 755 "$work" # the job's output directory must be reachable by slurmstepd
mkdir -p "$work"/{munge,state,spool,log,out,db}
log "working in $work"

# Free TCP ports for slurmctld and slurmd, asked of the kernel.
read -r ctld_port slurmd_port < <(python3 - <<'EOF'
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))
EOF
)

# --- 2. munge ----------------------------------------------------------------
log "starting munged (own key and socket)"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munge_socket="$work/munge/munge.socket"
munged --foreground --force \
    --key-file="$work/munge/munge.key" --socket="$munge_socket" \
    --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
    --log-file="$work/log/munged.log" >>"$work/log/munged.log" 2>&1 &
pids+=($!)
munge_ok() { munge -n -S "$munge_socket" 2>/dev/null | unmunge -S "$munge_socket" >/dev/null 2>&1; }
wait_for "munged" 20 munge_ok

# --- 3. slurm ----------------------------------------------------------------
node=$(hostname -s)
cpus=$(nproc)
((cpus >= 2)) || cpus=2 # two 1-CPU tasks; SlurmdParameters=config_overrides trusts this
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# Single-node Slurm for orchard's CI: no systemd, no cgroups, no accounting.
ClusterName=orchardci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$work/log/jobcomp.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=30
InactiveLimit=0
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
# No cgroups at all: proctrack/linuxproc and task/none need none.
printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$work/cgroup.conf"

log "starting slurmctld (port $ctld_port) and slurmd (port $slurmd_port) on node $node"
slurmctld -D -i -f "$SLURM_CONF" >>"$work/log/slurmctld.stderr.log" 2>&1 &
pids+=($!)
wait_for "slurmctld to answer" 30 bash -c 'timeout 5 scontrol ping 2>/dev/null | grep -q UP'
slurmd -D -f "$SLURM_CONF" >>"$work/log/slurmd.stderr.log" 2>&1 &
pids+=($!)
node_idle() { timeout 5 sinfo -h -n "$node" -o %T 2>/dev/null | grep -qx idle; }
wait_for "node $node to be idle" 60 node_idle
log "slurm is up: $(sinfo -h -o '%P %D %T %C')"

# --- 4. orchard coordinator, with a token ------------------------------------
unset ORCHARD_TOKEN
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token")
log "starting orchard coordinator on 127.0.0.1 with --token-file (lease TTL 600 s)"
"$bin" coordinator --listen 127.0.0.1:0 --db "$work/db/orchard.db" --lease-ttl 600 \
    --token-file "$work/token" >>"$work/log/coordinator.log" 2>&1 &
pids+=($!)
wait_for "the coordinator to listen" 30 grep -q 'listening on' "$work/log/coordinator.log"
coordinator="http://$(grep -o 'listening on [0-9.:]*' "$work/log/coordinator.log" | head -n1 | cut -d' ' -f3)"
export ORCHARD_COORDINATOR=$coordinator
log "coordinator at $coordinator"

orchard() { timeout 30 "$bin" "$@" --coordinator "$coordinator" --token-file "$work/token"; }
# json_get KEY...: the value at that path in the JSON on stdin.
json_get() {
    python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else json.dumps(v) if isinstance(v, (dict, list)) else v)' "$@"
}

if timeout 30 "$bin" status --coordinator "$coordinator" --json >/dev/null 2>&1; then
    fail "the coordinator answered a client without the token"
fi
log "a client without the token is refused"

# Job A: h'(4) = 47 with 5 maximal games (fast).
job_a=$(orchard submit hc --columns 4 --variant subsets --json | json_get job_id)
[[ $job_a =~ ^[0-9]+$ ]] || fail "submit printed no job id"
# Job B: every game of h'(4) reaching 24 moves, counted by length. Its units
# take about 15 s of one core in all, long enough to preempt a worker mid-run;
# the counts are exact only if the preempted worker's rest came back whole.
job_b=$(orchard submit hc --columns 4 --variant subsets --min-length 24 --json | json_get job_id)
[[ $job_b =~ ^[0-9]+$ ]] || fail "submit printed no job id"
log "submitted job $job_a (hc --columns 4 --variant subsets) and job $job_b (the same with --min-length 24)"

# --- 5. the sbatch script -----------------------------------------------------
sbatch_file="$repo/deploy/slurm/orchard-workers.sbatch"
# It must refuse a token file that others can read, before starting anything.
cp "$work/token" "$work/token-open"
chmod 644 "$work/token-open"
if ORCHARD_TOKEN_FILE="$work/token-open" ORCHARD_BIN="$bin" \
    timeout 10 bash "$sbatch_file" >"$work/out/open-token.txt" 2>&1; then
    fail "orchard-workers.sbatch accepted a token file with mode 644"
fi
grep -q 'chmod 600' "$work/out/open-token.txt" || fail "orchard-workers.sbatch gave no hint to chmod the token file"
log "orchard-workers.sbatch refuses a token file readable by others"

export ORCHARD_TOKEN_FILE="$work/token" ORCHARD_BIN="$bin" ORCHARD_GIVE_UP_AFTER=60
log "sbatch --array=0-1 --cpus-per-task=1 deploy/slurm/orchard-workers.sbatch"
array=$(timeout 30 sbatch --parsable --array=0-1 --cpus-per-task=1 --time=15 \
    --output="$work/out/worker-%A_%a.out" "$sbatch_file")
array=${array%%;*}
[[ $array =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $array"
array_ids+=("$array")

running() { [[ $(timeout 5 squeue -h -j "$array" -t RUNNING -o %i 2>/dev/null | wc -l) -eq 2 ]]; }
wait_for "both array tasks to run" 60 running
log "array $array running: $(timeout 5 squeue -h -j "$array" -o '%i %T cpus=%C %N' | paste -sd ';')"
# Record the workers' PIDs, to stop any survivor by PID at exit. Only the
# processes that are this test's orchard workers: without cgroups, `scontrol
# listpids` can list every process of the machine (PID 1 included), and a
# cleanup that signalled those took down the test itself and anything else
# running here.
for raw in $(timeout 5 squeue -h -j "$array" -o %A); do
    for pid in $(timeout 10 scontrol listpids "$raw" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'); do
        is_our_worker "$pid" && echo "$pid" >>"$work/worker.pids"
    done
done
log "worker processes: $(paste -sd' ' "$work/worker.pids")"

status_of() { orchard status "$1" --json; }
is_done() { [[ $(status_of "$1" | json_get state) == "done" ]]; }
# Both workers busy on job B (or it is already over).
both_busy() {
    local s
    s=$(status_of "$job_b")
    [[ $(json_get state <<<"$s") == "done" || $(json_get units_running <<<"$s") -ge 2 ]]
}
wait_for "both workers to run units of job $job_b" 90 both_busy

# Preemption: cancel task 0 while job B runs. Slurm sends its worker SIGTERM;
# the worker must hand back the rest of its units and exit 0. The lease TTL is
# 600 s, so units that were not handed back would stall job B past its timeout.
if ! is_done "$job_b"; then
    log "job $job_b: $(status_of "$job_b" | json_get units_running) units running, $(status_of "$job_b" | json_get nodes) nodes; preempting task ${array}_0 (scancel: SIGTERM)"
    timeout 10 scancel "${array}_0"
    task0_gone() { [[ -z $(timeout 5 squeue -h -j "${array}_0" -o %i 2>/dev/null) ]]; }
    wait_for "task ${array}_0 to leave the queue" 60 task0_gone
    grep -q 'worker stopped:' "$work/out/worker-${array}_0.out" ||
        fail "task ${array}_0: the worker did not stop cleanly on SIGTERM"
    log "task ${array}_0 left: $(grep 'worker stopped:' "$work/out/worker-${array}_0.out")"
else
    log "WARNING: job $job_b finished before a worker could be preempted"
fi

wait_for "job $job_a to be done" 120 is_done "$job_a"
wait_for "job $job_b to be done" 180 is_done "$job_b"

res_a=$(orchard results "$job_a" --json)
log "job $job_a: h' = $(json_get h <<<"$res_a"), $(json_get maximal_count <<<"$res_a") maximal games"
[[ $(json_get h <<<"$res_a") == 47 && $(json_get maximal_count <<<"$res_a") == 5 ]] ||
    fail "job $job_a: expected h' = 47 with 5 maximal games, got $res_a"

res_b=$(orchard results "$job_b" --json)
expected_b='{"24": 12023910, "25": 10398007, "26": 9669500, "27": 6283605, "28": 4642166, "29": 3123907, "30": 1763177, "31": 924017, "32": 592363, "33": 262574, "34": 165703, "35": 73834, "36": 42842, "37": 17962, "38": 11977, "39": 5329, "40": 2814, "41": 1086, "42": 349, "43": 313, "44": 119, "45": 31, "46": 5}'
got_b=$(json_get histogram <<<"$res_b")
log "job $job_b: games by length $got_b"
python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1]) != json.loads(sys.argv[2]))' "$expected_b" "$got_b" ||
    fail "job $job_b: wrong counts; expected $expected_b"
[[ $(json_get maximal_count <<<"$res_b") == 5 ]] || fail "job $job_b: expected 5 maximal games, got $res_b"
log "both answers are right (50005590 games of 24 moves or more, 5 of 46)"

# --- 6. scancel the rest: every worker exits 0 ------------------------------
log "scancel $array"
timeout 10 scancel "$array"
array_gone() { [[ -z $(timeout 5 squeue -h -j "$array" -o %i 2>/dev/null) ]]; }
wait_for "array $array to leave the queue" 60 array_gone
for out in "$work"/out/worker-"${array}"_*.out; do
    grep -q 'worker stopped:' "$out" || fail "$(basename "$out"): the worker did not stop cleanly"
done
# jobcomp/filetxt records each task's exit status: ExitCode=0:0 is exit 0,
# no signal (a worker killed by SIGKILL would show 0:9).
for task in 0 1; do
    recorded() { grep -q "ArrayJobId=$array ArrayTaskId=$task " "$work/log/jobcomp.log" 2>/dev/null; }
    wait_for "task ${array}_$task in the job completion log" 20 recorded
    line=$(grep "ArrayJobId=$array ArrayTaskId=$task " "$work/log/jobcomp.log" | tail -n1)
    [[ $line == *" ExitCode=0:0 "* ]] ||
        fail "task ${array}_$task did not exit 0: $(grep -o 'JobState=[A-Z]*\|ExitCode=[0-9:]*' <<<"$line" | paste -sd' ')"
done
log "both workers exited 0"
array_ids=()
