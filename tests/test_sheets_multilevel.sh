#!/usr/bin/env bash
# Multilevel PBNG on sheets (issue 18 item 3; docs/sheets_multilevel.md): FAS with generated coarse
# sheets reaches Newton's equilibrium on the stretched sheet (cloth_stretch) and on the sheet hanging
# from two corners (cloth_drape -drape corners, quasistatic); 1 and 3 ranks give the same positions
# after a fixed number of cycles; what multilevel does not carry to coarse sheets is refused, leaving
# no output.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# 1. the stretched sheet, res 11 -> 6 (2 frames): FAS and Newton agree (measured 8.3e-13 relative; residuals FAS
# 4.2e-12, Newton 2.0e-14)
stretch=(-scene cloth_stretch -res 11 -frames 2)
run stretch_ml "${stretch[@]}" -multilevel 2 -rtol 1e-11 -residual_every 1 -iters 100
run stretch_newton "${stretch[@]}" -solver newton -iters 100 -rtol 1e-12
check stretch_newton --max-relative-residual 1e-12
check stretch_ml --max-relative-residual 1e-11 --compare "$TMP/stretch_newton.h5" --rtol 2.5e-12
grep -q "level 0 (generated sheet, res 6): 36 nodes" "$TMP/stretch_ml.log" && ok || fail "the coarse level is not the res-6 sheet: $(grep level "$TMP/stretch_ml.log")"
# FAS needs a handful of cycles a frame here (measured 11 to 1e-11; 6-7 to 1e-8 at res 21); single-level PBNG hundreds
cycles=$(grep -E '^frame +1/' "$TMP/stretch_ml.log" | awk '{print $4}')
[ -n "$cycles" ] && [ "$cycles" -le 15 ] && ok || fail "cloth_stretch res 11: FAS took $cycles cycles in frame 1 (expected <= 15)"

# 2. the hanging sheet, res 11 -> 6 (quasistatic, Chebyshev smoother; ~170 cycles to 1e-10): FAS and
# Newton agree (measured 5.2e-12 relative; residuals FAS 6.7e-11, Newton 9.4e-12 in 76 iterations: -rtol 1e-12
# was beyond its floor and ran out its 200)
hang=(-scene cloth_drape -drape corners -mode quasistatic -res 11 -frames 1)
run hang_ml "${hang[@]}" -multilevel 2 -accel chebyshev -rtol 1e-10 -residual_every 1 -iters 400
run hang_newton "${hang[@]}" -solver newton -iters 200 -rtol 1e-11
check hang_newton --max-relative-residual 1e-11
check hang_ml --max-relative-residual 1e-10 --compare "$TMP/hang_newton.h5" --rtol 1.6e-11

# 3. 1 and 3 ranks: the same positions after a fixed number of cycles on 3 levels, res 11 -> 6 -> 3 (the
# coarse solve is partition independent; sums differ in order only: measured 1.5e-12 relative with nonlinear GMRES and
# MUMPS on the coarsest level, 3e-13 with plain cycles and PETSc's own Cholesky)
fixed=(-scene cloth_drape -drape corners -mode quasistatic -res 11 -frames 1 -multilevel 3 -iters 8 -rtol 0)
for n in 1 3; do
  if mpi $n "$PBNG" "${fixed[@]}" -output "$TMP/ranks_$n.h5" > "$TMP/ranks_$n.log" 2>&1; then ok
  else fail "multilevel sheet on $n ranks"; cat "$TMP/ranks_$n.log"; fi
done
check ranks_3 --compare "$TMP/ranks_1.h5" --rtol 5e-12

# 3b. a Gmsh sheet file with its coarse level given (here itself): FAS runs and converges to its -rtol 1e-8 (the
# checker's residual: measured 1.7e-10 after 10 cycles; 5.5e-11 after 11 plain cycles, -multilevel_ngmres 0)
run square_ml -mesh "$PBNG_TEST_DATA/sheet_square_v41_ascii.msh" -mesh_levels "$PBNG_TEST_DATA/sheet_square_v22_ascii.msh" -fix_group top \
  -gravity 0,0,-9.8 -mode quasistatic -frames 1 -rtol 1e-8 -residual_every 1 -iters 100
check square_ml --max-relative-residual 1e-8

# 4. refusals (no output written)
expect_error "multilevel with sheet contacts" "contacts are carried to coarse tetrahedra only" \
  mpi 1 "$PBNG" -scene cloth_drape -res 9 -multilevel 2 -output "$TMP/bad.h5"
expect_error "multilevel with sheet groups on a generated sheet (no node sets)" "sheet of 9x9 vertices has no node set (physical group) named \"top\"" \
  mpi 1 "$PBNG" -scene cloth_drape -drape corners -res 9 -multilevel 2 -sheet0_group top -output "$TMP/bad.h5"
expect_error "multilevel on a sheet file without coarse files" "give this mixed tri3+bend4 mesh's coarser levels with -mesh_levels" \
  mpi 1 "$PBNG" -mesh "$PBNG_TEST_DATA/sheet_square_v41_ascii.msh" -fix_group top -multilevel 2 -output "$TMP/bad.h5"
expect_error "multilevel sheet: too many levels" "has only 2 coarser levels" \
  mpi 1 "$PBNG" -scene cloth_stretch -res 5 -multilevel 4 -output "$TMP/bad.h5"
finish
