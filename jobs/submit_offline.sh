#!/usr/bin/env bash
# The offline big run as two jobs: partition (jobs/partition.sbatch), then solve on PARTS ranks from the
# partitioned file (jobs/run.sbatch) once the first succeeded (--dependency=afterok). Default: the
# box stretch-and-twist at Res-128 (2.1M nodes, 10.2M tetrahedra) on 2 ranks, 10 frames.
#   bash jobs/submit_offline.sh                               # RES=128 PARTS=2
#   RES=128 PARTS=64 THREADS=4 FRAMES=100 bash jobs/submit_offline.sh -checkpoint_every 10
# Extra arguments go to pbng. Prints both job ids. Run from the repository root.
set -euo pipefail
RES=${RES:-128}
PARTS=${PARTS:-2}
THREADS=${THREADS:-1}
FRAMES=${FRAMES:-10}
SCENE=${SCENE:-box_stretch_twist}
RUNS=${PBNG_RUNS:-$PWD/runs}
part=$(sbatch --parsable --export=ALL,RES="$RES",PARTS="$PARTS",SCENE="$SCENE" jobs/partition.sbatch)
part=${part%%;*}
solve=$(sbatch --parsable --dependency=afterok:"$part" --ntasks="$PARTS" --cpus-per-task="$THREADS" --job-name=pbng-offline \
  jobs/run.sbatch -scene "$SCENE" -mesh "$RUNS/pbng-partition-$part/mesh.h5" -frames "$FRAMES" "$@")
solve=${solve%%;*}
echo "partition job $part, solve job $solve (starts when $part completes; output in $RUNS/pbng-offline-$solve)"
