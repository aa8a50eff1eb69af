#!/usr/bin/env bash
# Contacts in the constraint solvers (docs/contact.md#the-constraint-solvers) do not depend on the
# partition or the threads: two_blocks_colliding with -solver xpbd (both models) and the seed's XPBD
# (-solver xpbd_ho) on 1 rank x 2 threads and 3 ranks x 1 thread give bitwise the same frames (the
# contacts projected in key order on every rank alike, over positions gathered from their owners).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
blocks=(-scene two_blocks_colliding -res 5 -dt 0.004 -frames 34 -iters 10) # in contact from frame 29
for case in "xpbd spring" "xpbd unilateral" "xpbd_ho unilateral"; do
  read -r solver model <<<"$case"
  for layout in "1 2" "3 1"; do
    read -r ranks threads <<<"$layout"
    mpi "$ranks" "$PBNG" "${blocks[@]}" -solver "$solver" -contact_model "$model" -threads "$threads" -output "$TMP/$solver.$model.$ranks.h5" \
      > "$TMP/log" 2>&1 && ok || { fail "$solver $model, $ranks ranks"; cat "$TMP/log"; }
  done
  grep -q "contacts [1-9]" "$TMP/log" && ok || fail "$solver $model: no contact in the frame lines"
  "$PY" "$HERE/check_output.py" "$TMP/$solver.$model.3.h5" --compare "$TMP/$solver.$model.1.h5" --rtol 0 --quiet && ok \
    || fail "$solver $model: 3 ranks x 1 thread != 1 rank x 2 threads"
done
finish
