#!/usr/bin/env bash
# A data set as two jobs: the array jobs/dataset.sbatch (ARRAY tasks, default 0-3, each NTASKS ranks, default 2),
# then pbng-dataset merge of its directory once every task has ended (--dependency=afterany). The table is checked
# first (pbng-dataset check, with pbng -dry_run of every row): a bad table is refused before anything is submitted.
#   bash jobs/submit_dataset.sh table.csv                          # 4 tasks x 2 ranks
#   ARRAY=0-31%8 NTASKS=4 bash jobs/submit_dataset.sh table.csv -rtol 1e-4
# Extra arguments go to every sample's pbng run. Prints both job ids and the directory. Run from the repository root.
set -euo pipefail
table=${1:?usage: bash jobs/submit_dataset.sh TABLE [pbng options for every sample]}
shift
BIN=${PBNG_BIN:-$PWD/build/bin}
RUNS=${PBNG_RUNS:-$PWD/runs}
"$BIN/pbng-dataset" check "$table" -- "$@"
array=$(sbatch --parsable --array="${ARRAY:-0-3}" --ntasks="${NTASKS:-2}" jobs/dataset.sbatch "$table" "$@")
array=${array%%;*}
dir=${DATASET_DIR:-$RUNS/dataset-$array}
merge=$(sbatch --parsable --dependency=afterany:"$array" --job-name=pbng-dataset-merge --ntasks=1 --time=00:10:00 \
  --output="${SBATCH_OUTPUT:-pbng-dataset-merge-%j.log}" --wrap="'$BIN/pbng-dataset' merge '$dir'")
merge=${merge%%;*}
echo "array job $array, merge job $merge (after every task of $array); data set in $dir"
