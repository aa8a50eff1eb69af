#!/usr/bin/env bash
# The continuum seed's solver (-solver continuum_pbd, issue 18; docs/cloth.md#the-seeds-solver):
# inverted-element recovery — a mirrored and a flattened StVK box (-initial_state inverted | flat) have
# every element un-inverted after 10 frames with the seed's inversion handling, and stay inverted
# without it (-continuum_pbd_inversion 0: a mirrored StVK element has zero energy, so nothing pushes it
# back); results independent of the rank and thread counts (bitwise) on a box and on the sheet of
# cloth_drape; the quasistatic mode runs; the seed's beam study (beam_pull) against PBNG and Newton with
# the point load (-load_box/-load_force); check_output.py on the results; option errors.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# inverted_count FILE FRAME: tetrahedra with non-positive volume at that frame ("nan" when positions are not finite)
inverted_count() {
  "$PY" -c 'import h5py, sys, numpy as np
f = h5py.File(sys.argv[1], "r"); T = f["mesh/tetrahedra"][()]; x = f["frames/" + sys.argv[2] + "/positions"][()]
if not np.isfinite(x).all(): print("nan"); sys.exit()
v = np.einsum("ij,ij->i", np.cross(x[T[:, 1]] - x[T[:, 0]], x[T[:, 2]] - x[T[:, 0]]), x[T[:, 3]] - x[T[:, 0]])
print(int((v <= 0).sum()))' "$1" "$2"
}

box=(-scene box -res 5 -material stvk -mode dynamic -dt 0.01 -solver continuum_pbd)
for start in inverted flat; do
  run "recover_$start" "${box[@]}" -frames 10 -initial_state "$start"
  n=$(inverted_count "$TMP/recover_$start.h5" 000010)
  [ "$n" = 0 ] && ok || fail "$start start: $n inverted elements after 10 frames with the inversion handling"
  check "recover_$start"
  run "stuck_$start" "${box[@]}" -frames 3 -initial_state "$start" -continuum_pbd_inversion 0
  n=$(inverted_count "$TMP/stuck_$start.h5" 000003)
  [ "$n" = 320 ] && ok || fail "$start start without the inversion handling: $n of 320 inverted (expected all: plain StVK does not push them back)"
done

# rank and thread independence (bitwise): a box under gravity and the draped sheet
for case in box sheet; do
  if [ $case = box ]; then args=(-scene box -res 6 -material neohookean -mode dynamic -gravity 0,-9.8,0 -fix_box 0,0,0,0,1,1 -frames 3)
  else args=(-scene cloth_drape -drape corners -res 9 -frames 3); fi
  for nt in "1 1" "2 1" "3 2"; do
    set -- $nt
    out="${case}_$1x$2"
    if mpi "$1" "$PBNG" "${args[@]}" -solver continuum_pbd -threads "$2" -output "$TMP/$out.h5" > "$TMP/$out.log" 2>&1; then ok
    else fail "$case on $1 ranks x $2 threads"; cat "$TMP/$out.log"; continue; fi
    [ "$1$2" = 11 ] && { check "$out"; continue; }
    check "$out" --compare "$TMP/${case}_1x1.h5" --rtol 0
  done
done

# quasistatic pseudo time: the stretched sheet
run stretch -scene cloth_stretch -res 9 -frames 2 -iters 50 -solver continuum_pbd -continuum_pbd_dt 0.01
check stretch

# the seed's Fig. 5 (beam_pull: 100 N pulling a StVK beam, -load_box/-load_force): its strain at rest falls
# with the sweeps per step (the stiffness depends on the iteration count), while PBNG and Newton agree on
# the equilibrium (8.85 %); the point load is written and re-checked (/mesh/node_loads)
run beam_pbng -scene beam_pull
run beam_newton -scene beam_pull -solver newton -iters 50 -rtol 1e-10
check beam_pbng
check beam_newton
beam=(-scene beam_pull -solver continuum_pbd -mode dynamic -dt 0.01 -frames 40 -continuum_pbd_damping 0.02)
run beam_cpbd1 "${beam[@]}" -iters 1 -continuum_pbd_iterations 1
run beam_cpbd20 "${beam[@]}" -iters 20 -continuum_pbd_iterations 20
strain() { "$PY" -c 'import h5py, sys, numpy as np
f = h5py.File(sys.argv[1], "r"); X = f["mesh/rest_positions"][()]; x = f["frames/" + sorted(f["frames"].keys())[-1] + "/positions"][()]
e = np.isclose(X[:, 0], 4); print((x[e, 0] - X[e, 0]).mean() / 4)' "$1"; }
"$PY" -c "import sys; p, n = $(strain "$TMP/beam_pbng.h5"), $(strain "$TMP/beam_newton.h5"); sys.exit(0 if abs(p - n) < 1e-7 and 0.08 < n < 0.09 else 1)" \
  && ok || fail "beam_pull: PBNG $(strain "$TMP/beam_pbng.h5") vs Newton $(strain "$TMP/beam_newton.h5") strain"
"$PY" -c "import sys; a, b = $(strain "$TMP/beam_cpbd1.h5"), $(strain "$TMP/beam_cpbd20.h5"); sys.exit(0 if a > 5 * b > 0 else 1)" \
  && ok || fail "beam_pull: continuum_pbd strain with 1 sweep $(strain "$TMP/beam_cpbd1.h5") not >> with 20 $(strain "$TMP/beam_cpbd20.h5")"
expect_error "load box holding no node" "holds no node of the mesh" "$PBNG" -scene beam_pull -load_box 9,9,9,10,10,10 -output "$TMP/bad.h5"
expect_error "load force without a box" "-load_force needs -load_box" "$PBNG" -scene box -res 5 -load_force 1,0,0 -output "$TMP/bad.h5"
expect_error "load with multilevel" "with a point load (-load_box)" "$PBNG" -scene beam_pull -multilevel 2 -output "$TMP/bad.h5"

expect_error "no sweeps" "-continuum_pbd_iterations 0: must be >= 1" "$PBNG" "${box[@]}" -continuum_pbd_iterations 0 -output "$TMP/bad.h5"
expect_error "damping 1" "must be in [0, 1)" "$PBNG" "${box[@]}" -continuum_pbd_damping 1 -output "$TMP/bad.h5"
expect_error "pseudo step in dynamic mode" "-continuum_pbd_dt is for -mode quasistatic" "$PBNG" "${box[@]}" -continuum_pbd_dt 0.01 -output "$TMP/bad.h5"
expect_error "its options with another solver" "are for -solver continuum_pbd" "$PBNG" -scene box -res 5 -continuum_pbd_damping 0.1 -output "$TMP/bad.h5"
expect_error "explicit -rtol" "-rtol and -time_budget would end a frame" "$PBNG" "${box[@]}" -rtol 1e-6 -output "$TMP/bad.h5"
finish
