#!/usr/bin/env bash
# Sheets in contact, numerically (docs/cloth.md#sheets-in-contact; labelled numerics; the sanitizer run has
# its own sheet-contact case, tests/test_sanitizers.sh): on the trampoline of
# tests/make_trampoline.py PBNG (Chebyshev, 300 sweeps per frame) follows Newton's trajectory (Newton to
# -rtol 1e-10) to 1e-3 of the size, keeping every vertex within 4.5e-4 of the contact thickness h = 0.0285
# from the sheet, and 1 x 1 and 2 x 2 ranks x threads give the same positions to round-off (the sums
# over ranks and threads in another order).
# Bounds: at most ~3x the value measured (2026-11-27).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

"$PY" "$HERE/make_trampoline.py" "$TMP/trampoline.msh" && ok || fail "make_trampoline.py"
tramp=(-mesh "$TMP/trampoline.msh" -fix_group rim -gravity 0,-9.8,0 -mode dynamic -dt 0.01 -frames 14 -contact_model unilateral -contact_stiffness 1e4)
# Newton, the reference: relative residual measured 7.0e-11 (-rtol 1e-10)
run tramp_newton "${tramp[@]}" -solver newton -rtol 1e-10
check tramp_newton --max-relative-residual 1e-10
# PBNG follows Newton (measured 5.0e-4), its closest vertex 0.028287 from the sheet (1.6e-4 inside h = 0.0284518:
# bound h - 4.5e-4); 2 ranks x 2 threads against 1 x 1: measured 2.9e-15 (bitwise repeatable run to run)
run tramp_pbng "${tramp[@]}" -accel chebyshev -iters 300 -rtol 1e-7 -threads 1
check tramp_pbng --min-sheet-gap 0.0280 --compare "$TMP/tramp_newton.h5" --rtol 1e-3
if mpi 2 "$PBNG" "${tramp[@]}" -accel chebyshev -iters 300 -rtol 1e-7 -threads 2 -output "$TMP/tramp_2x2.h5" > "$TMP/tramp_2x2.log" 2>&1; then
  ok; check tramp_2x2 --compare "$TMP/tramp_pbng.h5" --rtol 9e-15
else fail "trampoline on 2 ranks x 2 threads"; cat "$TMP/tramp_2x2.log"; fi

finish
