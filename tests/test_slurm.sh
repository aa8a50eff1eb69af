#!/usr/bin/env bash
# The job scripts of jobs/ on a real Slurm: installs Debian's slurm-wlm and munge when missing, starts
# munged, slurmctld and slurmd on this machine with a generated slurm.conf (one node: this machine's
# CPUs and memory; private ports, sockets and spool under the test directory), submits every script
# at small size with sbatch, waits (bounded), checks exit states and outputs, and stops the daemons
# it started by their process ids. Also: a run stopped with `scancel --signal=TERM` checkpoints,
# requeues itself, continues with -restart auto and ends with the uninterrupted run's output. A data set
# (jobs/submit_dataset.sh: an array of 3 tasks of jobs/dataset.sbatch, then the merge job) covers every sample once.
# Reported skipped (exit 77; a failure in CI, where .ci/install-deps --tests installs them) only when slurm-wlm and
# munge are not installed and cannot be; daemons that are installed but do not start, or a node that does not come
# up, fail the test with the daemons' own messages.
source "$(dirname "$0")/lib.sh"
REPO="$(cd "$HERE/.." && pwd)"
BIN="$(dirname "$PBNG")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
D="$TMP/slurm"
mkdir -p "$D/state" "$D/spool" "$D/runs"

install_slurm() {
  command -v slurmctld > /dev/null && command -v slurmd > /dev/null && command -v munged > /dev/null && command -v sbatch > /dev/null && return 0
  [ "$(id -u)" -eq 0 ] || return 1
  echo "installing slurm-wlm and munge (Debian packages) ..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge > "$D/apt.log" 2>&1 || { tail -5 "$D/apt.log"; return 1; }
}
install_slurm || skip "slurm-wlm / munge are not installed and cannot be installed here (need root and Debian's archive)"

# --- daemons -----------------------------------------------------------------------------------------
PORT=$((20000 + $$ % 20000))
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ { print int($2 / 1024) - 1024 }' /proc/meminfo)
cat > "$D/slurm.conf" <<EOF
ClusterName=pbngtest
SlurmctldHost=$HOST
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=20
MinJobAge=600
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$D/slurm.conf"
KEY=/etc/munge/munge.key
if [ ! -r "$KEY" ]; then KEY="$D/munge.key"; dd if=/dev/urandom of="$KEY" bs=1024 count=1 2> /dev/null; chmod 600 "$KEY"; fi

stop_daemons() {
  for name in slurmd slurmctld munged; do
    [ -s "$D/$name.pid" ] && kill "$(cat "$D/$name.pid")" 2> /dev/null || true
  done
  sleep 1
  for name in slurmd slurmctld munged; do
    [ -s "$D/$name.pid" ] && kill -9 "$(cat "$D/$name.pid")" 2> /dev/null || true
  done
}
trap stop_daemons EXIT

munged --socket="$D/munge.sock" --pid-file="$D/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge.seed" --key-file="$KEY" --force \
  > "$D/munged.out" 2>&1 || { fail "munged does not start: $(cat "$D/munged.out")"; finish || exit 1; }
slurmctld -f "$D/slurm.conf" > "$D/slurmctld.out" 2>&1 || { fail "slurmctld does not start: $(cat "$D/slurmctld.out")"; finish || exit 1; }
slurmd -f "$D/slurm.conf" > "$D/slurmd.out" 2>&1 || { fail "slurmd does not start: $(cat "$D/slurmd.out")"; finish || exit 1; }
for _ in $(seq 1 30); do
  sinfo -h -o %t 2> /dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o %t | grep -q idle || { fail "the local Slurm node does not come up: $(tail -3 "$D/slurmd.log" "$D/slurmctld.log" 2>&1)"; finish || exit 1; }
echo "local Slurm up (ports $PORT-$((PORT + 1)), node $HOST: $CPUS CPUs, $MEM MB)"

# --- helpers -----------------------------------------------------------------------------------------
# submit ARGS...: sbatch from the repository root with this test's runs directory; prints the job id.
submit() {
  sbatch --parsable --chdir="$REPO" --export=ALL,PBNG_RUNS="$D/runs",PBNG_BIN="$BIN" "$@" | cut -d';' -f1
}
state() { scontrol show job "$1" 2> /dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
# wait_jobs TIMEOUT ID...: until every job has ended; fails the test for one that did not complete.
wait_jobs() {
  local timeout=$1 id s nudged
  shift
  local end=$((SECONDS + timeout))
  for id in "$@"; do
    nudged=0
    while :; do
      s=$(state "$id")
      case "$s" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE) break ;; esac
      if [ $SECONDS -ge $end ]; then fail "job $id still $s after ${timeout}s"; scancel "$id"; return; fi
      # a requeued job waits for its begin time (Slurm delays requeued jobs); bring it forward, once, to
      # 5 s from now, not to now: slurmd revokes the killed run's credential with a time stamp in whole
      # seconds, and a restart allocated in that same second is killed ("Job credential revoked", seen in CI)
      if [ "$nudged" = 0 ] && scontrol show job "$id" 2> /dev/null | grep -q 'Reason=BeginTime'; then
        scontrol update JobId="$id" StartTime=now+5 2> /dev/null && nudged=1
      fi
      sleep 1
    done
    [ "$s" = COMPLETED ] && ok || { fail "job $id ended $s"; cat "$D"/*"$id".log 2> /dev/null | tail -20; }
  done
}

# --- (a) one run ---------------------------------------------------------------------------------------
a=$(submit -o "$D/run-%j.log" jobs/run.sbatch -scene box_stretch_twist -res 6 -frames 3)
# --- (b) strong and (c) weak scaling -------------------------------------------------------------------
b=$(submit -o "$D/strong-%j.log" --export=ALL,PBNG_RUNS="$D/runs",PBNG_BIN="$BIN",RES=8,ITERS=5,REPEATS=1,SWEEP="1:1:1 1:2:1 1:1:2" \
  jobs/strong_scaling.sbatch)
c=$(submit -o "$D/weak-%j.log" --export=ALL,PBNG_RUNS="$D/runs",PBNG_BIN="$BIN",BASE_RES=6,ITERS=5,REPEATS=1,SWEEP="1:1 1:2" jobs/weak_scaling.sbatch)
# --- (d) the offline run: partition, then solve after it --------------------------------------------
out=$(cd "$REPO" && SBATCH_OUTPUT="$D/%x-%j.log" PBNG_RUNS="$D/runs" PBNG_BIN="$BIN" RES=8 PARTS=2 FRAMES=2 bash jobs/submit_offline.sh 2>&1) \
  || fail "submit_offline.sh: $out"
d1=$(sed -n 's/^partition job \([0-9]*\), solve job \([0-9]*\).*/\1/p' <<<"$out")
d2=$(sed -n 's/^partition job \([0-9]*\), solve job \([0-9]*\).*/\2/p' <<<"$out")
[ -n "$d1" ] && [ -n "$d2" ] && ok || fail "submit_offline.sh printed no job ids: $out"
scontrol show job "$d2" | grep -q "Dependency=afterok:$d1" && ok || fail "the solve job does not depend on the partition job (afterok)"
# --- (f) a data set: an array of 3 tasks over a 5-sample table, then the merge job (jobs/submit_dataset.sh) -----------
printf '%s\n' id,youngs,gravity 'f0,1e4,"0,-9.8,0"' 'f1,2e4,"0,-9.8,0"' 'f2,3e4,"0,0,-9.8"' 'f3,4e4,"0,-5,0"' 'f4,5e4,"-9.8,0,0"' > "$D/table.csv"
out=$(cd "$REPO" && SBATCH_OUTPUT="$D/%x-%j.log" PBNG_RUNS="$D/runs" PBNG_BIN="$BIN" ARRAY=0-2 NTASKS=2 bash jobs/submit_dataset.sh "$D/table.csv" \
  -scene box -res 4 -frames 2 -rtol 1e-3 -iters 400 -fix_box 0,0,0,0,1,1 2>&1) || fail "submit_dataset.sh: $out"
f1=$(sed -n 's/^array job \([0-9]*\), merge job \([0-9]*\).*/\1/p' <<<"$out")
f2=$(sed -n 's/^array job \([0-9]*\), merge job \([0-9]*\).*/\2/p' <<<"$out")
[ -n "$f1" ] && [ -n "$f2" ] && ok || fail "submit_dataset.sh printed no job ids: $out"
wait_jobs 240 "$a" "$b" "$c" "$d1" "$d2"

"$PY" "$HERE/check_output.py" "$D/runs/pbng-$a/result.h5" --quiet && ok || fail "(a) result"
grep -q "command: srun --mpi=pmix --nodes=1 --ntasks=2 --cpus-per-task=1 .*/pbng -scene box_stretch_twist -res 6 -frames 3" "$D/run-$a.log" \
  && ok || { fail "(a) the job log lacks the exact command line"; cat "$D/run-$a.log"; }
grep -q "PBNGIterate" "$D/runs/pbng-$a/result.log_view" && ok || fail "(a) no -log_view output"
"$PY" "$HERE/../bench/collect_scaling.py" "$D/runs/pbng-strong-$b" > "$D/collect-strong.log" 2>&1 && ok || { fail "(b) collect"; cat "$D/collect-strong.log"; }
[ "$(grep -c '^ *1 ' "$D/collect-strong.log")" -ge 3 ] && [ -s "$D/runs/pbng-strong-$b/scaling.png" ] && ok || { fail "(b) scaling table/plot"; cat "$D/collect-strong.log"; }
# the scaling studies run the default solver, multilevel PBNG to the tolerance (issue 42): every run has coarse levels
"$PY" -c 'import glob, json, sys; r = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json")]; assert r and all(s["multilevel"] > 1 for s in r), [s["multilevel"] for s in r]' \
  "$D/runs/pbng-strong-$b" && grep -q "solver=multilevel" "$D/runs/pbng-strong-$b/study.txt" && ok || fail "(b) the strong study's runs are not multilevel"
"$PY" "$HERE/../bench/collect_scaling.py" "$D/runs/pbng-weak-$c" > "$D/collect-weak.log" 2>&1 && grep -q "weak scaling, 2 runs" "$D/collect-weak.log" && ok \
  || { fail "(c) collect"; cat "$D/collect-weak.log"; }
[ -s "$D/runs/pbng-partition-$d1/mesh.h5" ] && ok || fail "(d) no partitioned mesh"
"$PY" "$HERE/check_output.py" "$D/runs/pbng-offline-$d2/result.h5" --frames 2 --quiet && ok || fail "(d) result of the solve job"
grep -q -- "command: srun .*/pbng .*-mesh $D/runs/pbng-partition-$d1/mesh.h5" "$D/pbng-offline-$d2.log" && ok \
  || { fail "(d) the solve job did not read the partitioned mesh"; cat "$D/pbng-offline-$d2.log"; }

wait_jobs 240 "${f1}_0" "${f1}_1" "${f1}_2" "$f2"
grep -q "srun --mpi=pmix --nodes=1 --ntasks=2 --cpus-per-task=1 .*/pbng -scene box" "$D/runs/dataset-$f1/samples/f4.log" && ok \
  || fail "(f) the samples were not launched with srun"
grep -q "5 samples from 3 index file(s) into .*: 5 done" "$D/pbng-dataset-merge-$f2.log" && ok || { fail "(f) merge"; cat "$D/pbng-dataset-merge-$f2.log"; }
"$PY" - "$D/runs/dataset-$f1" << 'EOF' && ok || fail "(f) the merged index: not every sample exactly once, done, from its task"
import csv, sys
d = sys.argv[1]
merged = [r["id"] for r in csv.DictReader(open(f"{d}/index.csv")) if r["status"] == "done"]
assert merged == ["f0", "f1", "f2", "f3", "f4"], merged
for task, ids in ((0, ["f0", "f3"]), (1, ["f1", "f4"]), (2, ["f2"])):
    assert [r["id"] for r in csv.DictReader(open(f"{d}/index.task-{task}.csv"))] == ids, task
EOF
for id in f0 f1 f2 f3 f4; do "$PY" "$HERE/check_output.py" "$D/runs/dataset-$f1/samples/$id.h5" --frames 2 --quiet && ok || fail "(f) $id: check_output"; done

# --- checkpoint under Slurm: scancel --signal=TERM, self-requeue, -restart auto ------------------------
long=(-scene box_stretch_twist -res 12 -frames 30 -iters 40 -rtol 0 -threads 1)
e=$(submit -o "$D/ckpt-%j.log" jobs/run.sbatch "${long[@]}")
for _ in $(seq 1 120); do
  grep -q "^frame    3/" "$D/ckpt-$e.log" 2> /dev/null && break
  sleep 0.5
done
scancel --signal=TERM "$e"
wait_jobs 300 "$e"
grep -q "stopped by signal 15" "$D/ckpt-$e.log" && ok || fail "(e) pbng did not report the SIGTERM"
grep -q "checkpoint written: requeueing job $e" "$D/ckpt-$e.log" && ok || fail "(e) the job did not requeue itself"
grep -q "^restart: .*checkpoint.h5, frame" "$D/ckpt-$e.log" && ok || { fail "(e) the requeued job did not restart from the checkpoint"; cat "$D/ckpt-$e.log"; }
mpiexec -n 2 --oversubscribe --bind-to none "$PBNG" "${long[@]}" -output "$D/uninterrupted.h5" > "$D/uninterrupted.log" 2>&1 && ok || fail "(e) uninterrupted run"
"$PY" "$HERE/check_output.py" "$D/runs/pbng-$e/result.h5" --compare "$D/uninterrupted.h5" --rtol 1e-12 --quiet && ok \
  || fail "(e) the restarted job's output differs from the uninterrupted run"
[ ! -e "$D/runs/pbng-$e/result.h5.checkpoint.h5" ] && ok || fail "(e) checkpoint left after completion"
finish
