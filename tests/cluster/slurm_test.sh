#!/usr/bin/env bash
# A real single-node Slurm cluster (ctest label "cluster"; `make test-cluster`; .ci/run).
#
# Starts munged, slurmctld and slurmd as root with a generated configuration under a
# temporary directory (no systemd, nothing written outside it), then submits the two job
# scripts of docs/cluster.md exactly as printed there (extracted from the markdown):
#   - the job array: K = 3 shards (--shard i/3), then `attnlab merge` in a job that
#     depends on the array (afterok);
#   - the MPI job: `mpirun ... attnlab run --mpi` inside an sbatch allocation of 3 tasks,
#     and the same with `srun --mpi=pmix` when Slurm has the PMIx plugin;
# and checks that the merged results and the MPI results equal a single-machine run
# (every cell of results.csv but the timings). Always tears the daemons down (trap),
# including job processes, and fails if any process of the test cluster is left.
#
#   tests/cluster/slurm_test.sh ATTNLAB SOURCE_DIR WORK_DIR [ATTNLAB_MPI]
# Exit 0 on success, 77 (ctest: skipped) when not root, Slurm/munge/MPI are missing,
# ATTNLAB_MPI (the CMake option of this build) is OFF, or slurmd or slurmctld cannot run on
# this machine (they exit before the node is up, e.g. without a cgroup filesystem); the
# reason is the line "SKIP: ..." on stdout. Every failure after the cluster is up is a
# failure (exit 1). tests/cluster/slurm_skip_test.sh checks both.
set -uo pipefail

ATTNLAB=$(readlink -f "$1")
SRC=$(readlink -f "$2")
WORK=$3
DEADLINE_SECONDS=${SLURM_TEST_DEADLINE:-300}
SPEC=$SRC/experiments/demo/baselines.toml
NAME=baselines

started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
skip() { echo "SKIP: $*"; exit 77; }
case "${4:-ON}" in
  OFF|FALSE|0|NO|"") skip "this attnlab was built without MPI (cmake -DATTNLAB_MPI=ON with libopenmpi-dev)" ;;
esac
[ "$(id -u)" -eq 0 ] || skip "the Slurm test starts munged, slurmctld and slurmd and must run as root"
for cmd in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo srun mpirun /usr/bin/python3; do
  command -v "$cmd" >/dev/null 2>&1 ||
    skip "$cmd not found; install slurm-wlm, munge and openmpi-bin (scripts/install-deps)"
done

rm -rf "$WORK"
mkdir -p "$WORK"
W=$(readlink -f "$WORK")
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/job/logs"
chmod 755 "$W" "$W/munge"
# Every process of this test cluster (daemons, job steps, jobs) carries this variable,
# which is how the teardown finds them and nothing else (not this script itself).
MARK="ATTNLAB_SLURM_TEST=$W"
export SLURM_CONF=$W/slurm.conf
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # jobs run as root here
export ATTNLAB_NO_PROGRESS=1

cluster_pids() {
  grep -lxzF "$MARK" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}

teardown() {
  local rc=$?
  trap - EXIT INT TERM
  echo "teardown after $(elapsed) s"
  timeout 10 scancel --quiet --full --user=root >/dev/null 2>&1 || true
  local pids
  pids=$(cluster_pids)
  [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
  for _ in $(seq 50); do
    pids=$(cluster_pids)
    [ -z "$pids" ] && break
    sleep 0.1
  done
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null && sleep 0.5
  pids=$(cluster_pids)
  if [ -n "$pids" ]; then
    echo "FAIL: processes of the test cluster are left: $(ps -o pid=,comm= -p ${pids// /,} | tr '\n' ' ')"
    rc=1
  else
    echo "teardown: munged, slurmctld, slurmd and every job process are gone"
  fi
  [ "$rc" -eq 0 ] && rm -rf "$W"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

fail() {
  echo "FAIL: $*"
  for f in "$W"/log/*.log "$W"/job/logs/*; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
  done
  exit 1
}

# --- munge: a fresh key, a private socket ----------------------------------------------
dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$W/munge/munge.key"
env "$MARK" munged --foreground --force --key-file="$W/munge/munge.key" --socket="$W/munge/munge.sock" \
       --pid-file="$W/munge/munged.pid" --log-file="$W/log/munged.log" \
       --seed-file="$W/munge/munged.seed" > "$W/log/munged.out" 2>&1 &
for _ in $(seq 50); do [ -S "$W/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$W/munge/munge.sock" ] || fail "munged did not start"

# --- slurm.conf: this host as the controller and the only node -------------------------
NODE=$(hostname -s)
PORT=$((20000 + RANDOM % 20000))
cat > "$SLURM_CONF" <<EOF
ClusterName=attnlabtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
# 4 CPUs whatever the machine has (the MPI job asks for 3 tasks; CI machines have 2 cores).
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

env "$MARK" slurmctld -D -i -f "$SLURM_CONF" > "$W/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
env "$MARK" slurmd -D -f "$SLURM_CONF" > "$W/log/slurmd.out" 2>&1 &
SLURMD_PID=$!
for _ in $(seq 150); do
  [ "$(sinfo -h -n "$NODE" -o %T 2>/dev/null)" = "idle" ] && break
  kill -0 "$SLURMD_PID" 2>/dev/null || break
  sleep 0.2
done
if [ "$(sinfo -h -n "$NODE" -o %T 2>/dev/null)" != "idle" ]; then
  # Nothing of attnlab has run yet: a daemon that cannot come up on this machine (no
  # cgroup filesystem, no permission to use it, a container without the needed kernel
  # interfaces) is a skip with its own words; a node that is up but not usable is a failure.
  machine_reason() {  # the daemon's last error line, or nothing
    cat "$W/log/$1.out" "$W/log/$1.log" 2>/dev/null | grep -Ei 'error|fatal|cannot|couldn.t|failed' | tail -n 1
  }
  cgroup=""
  [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" ] || cgroup="; this machine has no cgroup filesystem at /sys/fs/cgroup"
  if ! kill -0 "$SLURMD_PID" 2>/dev/null; then
    skip "slurmd cannot run on this machine (it exited: $(machine_reason slurmd))$cgroup"
  elif ! kill -0 "$CTLD_PID" 2>/dev/null; then
    skip "slurmctld cannot run on this machine (it exited: $(machine_reason slurmctld))$cgroup"
  fi
  fail "the node did not become idle: $(sinfo -h -n "$NODE" -o '%T %E' 2>/dev/null)$cgroup"
fi
echo "cluster up after $(elapsed) s: $(sinfo -h -o '%P %a %D %T %N')"

# --- the job scripts, as docs/cluster.md prints them -----------------------------------
extract() {  # the fenced block after the marker <!-- slurm_test: NAME -->
  awk -v marker="<!-- slurm_test: $1 -->" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$SRC/docs/cluster.md"
}
extract sweep.sbatch > "$W/job/sweep.sbatch"
extract mpi.sbatch > "$W/job/mpi.sbatch"
[ -s "$W/job/sweep.sbatch" ] && [ -s "$W/job/mpi.sbatch" ] ||
  fail "docs/cluster.md lacks the marked job scripts (<!-- slurm_test: sweep.sbatch / mpi.sbatch -->)"

cd "$W/job"
export ATTNLAB SPEC NAME RUNS=$W/job/runs K=3
# Sized for this one node: 1 CPU per array task, small memory requests.
ARRAY=$(sbatch --parsable --export="ALL,$MARK" --array=0-2 --cpus-per-task=1 --mem-per-cpu=200M sweep.sbatch) ||
  fail "sbatch of the array job"
ARRAY=${ARRAY%%;*}
MERGE=$(sbatch --parsable --export="ALL,$MARK" --dependency=afterok:$ARRAY --job-name=$NAME-merge \
               --output=logs/%x-%j.out --time=00:30:00 --cpus-per-task=1 --mem-per-cpu=200M \
               --wrap="$ATTNLAB merge $RUNS/$NAME/merged $RUNS/$NAME/shard-*") ||
  fail "sbatch of the merge job"
MERGE=${MERGE%%;*}
MPI=$(sbatch --parsable --export="ALL,$MARK" --ntasks=3 --mem-per-cpu=200M mpi.sbatch) || fail "sbatch of the MPI job"
MPI=${MPI%%;*}
JOBS="$ARRAY $MERGE $MPI"
SRUN_PMIX=0
if srun --mpi=list 2>&1 | grep -q pmix; then
  # The docs' alternative launcher: srun with Slurm's PMIx plugin instead of mpirun.
  sed 's|^mpirun --bind-to none |srun --mpi=pmix |; s|/mpi"$|/mpi-srun"|' mpi.sbatch > mpi-srun.sbatch
  grep -q '^srun --mpi=pmix ' mpi-srun.sbatch || fail "no mpirun line to replace in mpi.sbatch"
  SRUN=$(sbatch --parsable --export="ALL,$MARK" --ntasks=3 --mem-per-cpu=200M --job-name=$NAME-srun mpi-srun.sbatch) ||
    fail "sbatch of the srun MPI job"
  JOBS="$JOBS ${SRUN%%;*}"
  SRUN_PMIX=1
fi
echo "submitted: array $ARRAY (3 tasks), merge $MERGE (afterok:$ARRAY), MPI job(s) ${JOBS#* * }"

# The single-machine reference meanwhile (outside Slurm).
"$ATTNLAB" run "$SPEC" --out "$W/single" --jobs 1 --quiet > "$W/log/single.out" 2>&1 ||
  fail "single-machine run"

while [ -n "$(squeue -h -j "${JOBS// /,}" 2>/dev/null)" ]; do
  [ "$(elapsed)" -lt "$DEADLINE_SECONDS" ] || fail "jobs still queued or running after $(elapsed) s: $(squeue -h -j "${JOBS// /,}")"
  sleep 1
done
for j in $JOBS; do
  states=$(scontrol -o show job "$j" | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
  echo "job $j: $states"
  [ "$states" = "JobState=COMPLETED " ] || fail "job $j did not complete: $states"
done
echo "jobs done after $(elapsed) s"
cat logs/* 2>/dev/null | grep -E "runs|merged" | sed 's/^/  /'

# --- the results equal the single-machine run ------------------------------------------
DIRS="$RUNS/$NAME/merged $RUNS/$NAME/mpi"
[ "$SRUN_PMIX" = 1 ] && DIRS="$DIRS $RUNS/$NAME/mpi-srun"
/usr/bin/python3 - "$W/single" $DIRS <<'EOF' || fail "results differ from the single-machine run"
import csv, sys
def rows(d):
    with open(d + "/results.csv") as f:
        return {r["run_id"]: r for r in csv.DictReader(f)}
timing = {"wall_seconds", "fit_seconds", "peak_rss_mb"}
single = rows(sys.argv[1])
ok = len(single) > 0 and all(r["status"] == "ok" for r in single.values())
for d in sys.argv[2:]:
    other = rows(d)
    diff = [(k, c) for k in single for c in single[k]
            if c not in timing and (k not in other or other[k].get(c) != single[k][c])]
    same = other.keys() == single.keys() and not diff
    print(f"  {d}: {len(other)} runs; {len(diff)} cells differ from the single-machine run outside {sorted(timing)}")
    ok = ok and same
sys.exit(0 if ok else 1)
EOF
echo "PASS: job array + merge and MPI job(s) equal the single-machine run ($(elapsed) s)"
