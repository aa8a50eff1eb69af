#!/usr/bin/env bash
# Contacts in the constraint solvers (docs/contact.md#the-constraint-solvers-pbd-xpbd-xpbd-qs-the-seeds-xpbd) do not depend on the
# partition or the threads: two_blocks_colliding with -solver xpbd (both models; with gravity, so that a
# step's start moves the contact ghosts too), the seed's XPBD (-solver xpbd_ho) and XPBD-QS in quasistatic
# frames (detections within pseudo steps: multipliers kept by key) on 1 rank x 2 threads and 3 ranks x 1
# thread give bitwise the same frames: positions, and the residual, relative residual and energy of every
# frame (the contacts projected in key order on every rank alike, over positions gathered from their
# owners; contact ghosts refreshed at each step's start). The runs' result (a fixed number of sweeps, not an
# equilibrium): no surface vertex deeper inside the other block than a bound measured per case (independent
# checker, winding numbers).
# Bounds: at most ~3x the value measured (2026-11-27).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
blocks=(-scene two_blocks_colliding -res 5 -dt 0.004 -frames 34 -iters 10) # in contact from frame 29
# each case's penetration bound first; measured (deepest, frame 34 unless said): 1.49e-2, 3.66e-3, 2.27e-2,
# 8.1e-4 (frame 27)
for case in "4.5e-2 xpbd spring" "1.1e-2 xpbd unilateral -gravity 0,-98,0" "6.8e-2 xpbd_ho unilateral" \
            "2.4e-3 xpbd_qs spring -mode quasistatic -iters 20 -xpbd_qs_substeps 4 -contact_every 6"; do
  read -r depth solver model extra <<<"$case"
  tag="$solver.$model"
  for layout in "1 2" "3 1"; do
    read -r ranks threads <<<"$layout"
    # shellcheck disable=SC2086
    mpi "$ranks" "$PBNG" "${blocks[@]}" -solver "$solver" -contact_model "$model" $extra -threads "$threads" -output "$TMP/$tag.$ranks.h5" \
      > "$TMP/log" 2>&1 && ok || { fail "$case, $ranks ranks"; cat "$TMP/log"; }
  done
  grep -q "contacts [1-9]" "$TMP/log" && ok || fail "$case: no contact in the frame lines"
  "$PY" "$HERE/check_output.py" "$TMP/$tag.3.h5" --compare "$TMP/$tag.1.h5" --rtol 0 --max-penetration "$depth" --quiet && ok \
    || fail "$case: 3 ranks x 1 thread != 1 rank x 2 threads, or deeper than $depth"
  "$PY" - "$TMP/$tag.1.h5" "$TMP/$tag.3.h5" <<'PYEOF' && ok || fail "$case: the frames' residuals differ between 1 and 3 ranks"
import sys, h5py
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for name in sorted(a["frames"].keys()):
    for key in ("residual", "relative_residual", "energy"):
        va, vb = (f["frames"][name]["positions"].attrs.get(key, f["frames"][name].attrs.get(key)) for f in (a, b))
        assert va == vb, (name, key, va, vb)
PYEOF
done
finish
