#!/usr/bin/env bash
# Elastoplasticity and released sets (issue 18; docs/cloth.md#plasticity-in-a-run) independent of the rank
# and thread counts: plastic_twist's twist (PBNG, frames 0..7, the set holding) on 2 x 1 and 3 x 2 ranks x
# threads gives the 1 x 1 run's positions and plastic strains (1e-9); multilevel PBNG through the release
# (frames 0..9) on 2 x 2 equals 1 x 1 (1e-9).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

run twist_pbng -scene plastic_twist -solver pbng -frames 7 -threads 1
# ranks x threads: the same plastic state and positions (PBNG, the twist)
for nt in "2 1" "3 2"; do
  set -- $nt
  out="twist_$1x$2"
  if mpi "$1" "$PBNG" -scene plastic_twist -solver pbng -frames 7 -threads "$2" -output "$TMP/$out.h5" > "$TMP/$out.log" 2>&1; then ok; else fail "$out"; cat "$TMP/$out.log"; continue; fi
  check "$out" --compare "$TMP/twist_pbng.h5" --rtol 1e-9
  "$PY" -c 'import h5py, sys, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
sys.exit(0 if all(np.abs(a["frames/%s/plastic_strain" % k][()] - b["frames/%s/plastic_strain" % k][()]).max() < 1e-9 for k in a["frames"]) else 1)' \
    "$TMP/$out.h5" "$TMP/twist_pbng.h5" && ok || fail "$out: plastic strains differ from 1 rank"
done
# multilevel (-multilevel 2: the coarse level elastic, holding the released set): 1 x 1 = 2 x 2 (1e-9)
run twist_ml -scene plastic_twist -solver pbng -multilevel 2 -frames 9 -threads 1
if mpi 2 "$PBNG" -scene plastic_twist -solver pbng -multilevel 2 -frames 9 -threads 2 -output "$TMP/twist_ml_2x2.h5" > "$TMP/twist_ml_2x2.log" 2>&1; then
  ok; check twist_ml_2x2 --compare "$TMP/twist_ml.h5" --rtol 1e-9
else fail "multilevel on 2 ranks x 2 threads"; cat "$TMP/twist_ml_2x2.log"; fi

finish
