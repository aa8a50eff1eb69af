# Shared by the job scripts in jobs/ (sourced). Docs: docs/cluster.md.
#  - threads: OMP_NUM_THREADS from SLURM_CPUS_PER_TASK, and under Slurm OMP_PROC_BIND=close, OMP_PLACES=cores;
#  - launch: srun inside a Slurm job (with --mpi=$PBNG_SRUN_MPI, default pmix), else mpiexec;
#  - one directory per job: $PBNG_RUNS/<job name>-<job id> (a requeued job keeps its directory);
#  - every run's exact command line goes to the job log, and -log_view to <dir>/<tag>.log_view.
set -euo pipefail

# The repository: PBNG_REPO, else the parent of this file's directory.
PBNG_REPO=${PBNG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PBNG_BIN=${PBNG_BIN:-$PBNG_REPO/build/bin}
PBNG_RUNS=${PBNG_RUNS:-$PBNG_REPO/runs}
[ -x "$PBNG_BIN/pbng" ] || { echo "pbng not built: $PBNG_BIN/pbng is missing (build it, see README, or set PBNG_BIN)" >&2; exit 2; }

THREADS=${SLURM_CPUS_PER_TASK:-${THREADS:-1}}
export OMP_NUM_THREADS=$THREADS OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# Thread binding within each task's cores: srun gives every task its own cpuset (--cpu-bind=cores);
# mpiexec --bind-to none does not, and binding there would put every rank's first thread on core 0.
if [ -n "${SLURM_JOB_ID:-}" ]; then export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}; fi
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# job_dir NAME: creates and prints the job's directory.
job_dir() {
  local dir="$PBNG_RUNS/$1-${SLURM_JOB_ID:-local-$$}"
  mkdir -p "$dir"
  echo "$dir"
}

# launcher RANKS THREADS NODES: the MPI launch prefix: srun inside a Slurm job, else mpiexec.
launcher() {
  local ranks=$1 threads=$2 nodes=$3
  if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun > /dev/null; then
    echo srun --mpi="${PBNG_SRUN_MPI:-pmix}" --nodes="$nodes" --ntasks="$ranks" --cpus-per-task="$threads" --cpu-bind=cores
  else
    echo mpiexec -n "$ranks" --bind-to none "${PBNG_MPIEXEC_ARGS:-}"
  fi
}

# run_logged DIR TAG RANKS THREADS NODES PBNG-ARGS...: runs pbng with -threads, -summary DIR/TAG.json
# and -log_view into DIR/TAG.log_view, printing the exact command first. Returns pbng's status.
run_logged() {
  local dir=$1 tag=$2 ranks=$3 threads=$4 nodes=$5
  shift 5
  local cmd rc=0
  read -r -a cmd <<<"$(launcher "$ranks" "$threads" "$nodes")"
  cmd+=("$PBNG_BIN/pbng" "$@" -threads "$threads" -summary "$dir/$tag.json" -log_view ":$dir/$tag.log_view")
  echo "[$(date -Is)] command: ${cmd[*]}"
  OMP_NUM_THREADS=$threads "${cmd[@]}" || rc=$?
  echo "[$(date -Is)] exit status $rc ($tag)"
  return $rc
}

# after_checkpoint STATUS: pbng exits 85 after writing a checkpoint (SIGTERM / SIGUSR1). Inside Slurm
# with REQUEUE=1 (the default) the job requeues itself and its next start continues with -restart
# auto; otherwise it says how to resubmit. Returns the status to exit with.
after_checkpoint() {
  local rc=$1
  [ "$rc" -eq 85 ] || return "$rc"
  if [ -n "${SLURM_JOB_ID:-}" ] && [ "${REQUEUE:-1}" = 1 ]; then
    echo "[$(date -Is)] checkpoint written: requeueing job $SLURM_JOB_ID (restart count ${SLURM_RESTART_COUNT:-0})"
    scontrol requeue "$SLURM_JOB_ID"
    return 0
  fi
  echo "[$(date -Is)] checkpoint written: resubmit the same job; it continues with -restart auto"
  return 85
}
