#!/usr/bin/env bash
# Contacts (docs/contact.md) do not depend on the partition or the threads: two_blocks_colliding with
# both models on 1 rank x 2 threads, 3 ranks x 1 thread and 4 ranks x 1 thread (spring) or 2 ranks x 2
# threads (unilateral) gives bitwise the same frames (detection, recoloring on rank 0, the joint step's
# system built in global-id order and solved alike on every rank).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
blocks=(-scene two_blocks_colliding -res 5 -frames 66 -iters 200 -rtol 1e-8)
for model in spring unilateral; do
  other="4 1"; [ "$model" = unilateral ] && other="2 2"
  for layout in "1 2" "3 1" "$other"; do
    read -r ranks threads <<<"$layout"
    mpi "$ranks" "$PBNG" "${blocks[@]}" -contact_model "$model" -threads "$threads" -output "$TMP/$model.$ranks.h5" > "$TMP/log" 2>&1 && ok \
      || { fail "$model, $ranks ranks"; cat "$TMP/log"; }
  done
  for ranks in 3 ${other% *}; do
    "$PY" "$HERE/check_output.py" "$TMP/$model.$ranks.h5" --compare "$TMP/$model.1.h5" --rtol 0 --quiet && ok || fail "$model: $ranks ranks != 1 rank x 2 threads"
  done
done
finish
