#!/usr/bin/env bash
# The GPBD seed's six-dimensional cloth stencil as a sheet term (-sheet_model cloth6, issue 43 item 4;
# docs/cloth.md#the-six-dimensional-cloth-stencil): a triangle and the vertex across each edge with the
# strain-stiffening energy of its six strains (core/cloth6.h), the same energy for PBNG, Newton and GPBD:
#  - its gradient and exact Hessian by central differences are test_cloth6 (the C unit test);
#  - the hanging sheet (cloth_drape -drape corners, res 7, stiffening 1000, k_bend 1e-3): PBNG's positions equal
#    Newton's to 1e-6 of the displacement; the stretched sheet (cloth_stretch, dynamic) likewise;
#  - GPBD (Gauss-Seidel and Jacobi) reaches Newton's steps on a tiny hanging and a stretched sheet;
#  - every result file passes the independent checker, which recomputes the residual with the cloth6 energy
#    (written from the formulas, complex-step forces);
#  - 2 ranks = 1 rank: PBNG and GPBD bitwise, Newton within its linear solves' round-off;
#  - a run stopped mid-frame (checkpoint) and restarted equals the uninterrupted one bitwise (PBNG on 2 ranks, GPBD);
#  - what cannot work is refused: other solvers, -multilevel, contacts, sheet groups, -sheet_stiffening without cloth6.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# displacement_close A B TOL: max |x_A - x_B| <= TOL max |x_B - X| over every frame (TOL of B's displacement)
displacement_close() {
  "$PY" - "$TMP/$1.h5" "$TMP/$2.h5" "$3" <<'PY' && ok || fail "$1 vs $2: positions differ by more than $3 of the displacement"
import sys, h5py, numpy as np
a, b, tol = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), float(sys.argv[3])
X = b["mesh/rest_positions"][...]
worst = 0.0
for name in sorted(b["frames"]):
    xb = b["frames"][name]["positions"][...]
    d = np.abs(xb - X).max()
    if d > 0:
        worst = max(worst, np.abs(a["frames"][name]["positions"][...] - xb).max() / d)
print(f"{sys.argv[1]} vs {sys.argv[2]}: {worst:.2e} of the displacement")
sys.exit(0 if worst <= tol else 1)
PY
}
# beta 1e5: on the stretched sheet (strains ~2e-3) the tangent stiffness grows by 3 beta s^2 ~ 1.5; k_bend 1e-2: the hanging
# sheet's bending forces matter (the tampered files below show both are in the checked energy)
c6=(-sheet_model cloth6 -sheet_stiffening 1e5 -sheet_bending_stiffness 1e-2 -threads 1)

# --- PBNG = Newton ----------------------------------------------------------------------------------------------
hang=(-scene cloth_drape -drape corners -res 7 -frames 2 "${c6[@]}")
run hang_newton "${hang[@]}" -solver newton -iters 50 -rtol 1e-11  # 4 iterations a frame
run hang_pbng "${hang[@]}" -solver pbng -iters 5000 -rtol 1e-10     # 311, 351 sweeps
grep -q "72 cloth6 elements" "$TMP/hang_pbng.log" && ok || fail "the header names the cloth6 stencils: $(head -1 "$TMP/hang_pbng.log")"
check hang_newton --max-relative-residual 1e-11
check hang_pbng --max-relative-residual 1e-10    # measured 9.7e-11, 6.8e-11
displacement_close hang_pbng hang_newton 1e-6   # measured 7.5e-11
stretch=(-scene cloth_stretch -res 7 -mode dynamic -dt 0.003 -frames 2 "${c6[@]}")
run stretch_newton "${stretch[@]}" -solver newton -iters 50 -rtol 1e-11
run stretch_pbng "${stretch[@]}" -solver pbng -iters 5000 -rtol 1e-10
check stretch_newton --max-relative-residual 1e-11
check stretch_pbng --max-relative-residual 1e-10
displacement_close stretch_pbng stretch_newton 1e-6  # measured 1.1e-11

# --- GPBD = Newton on tiny sheets ---------------------------------------------------------------------------------
tiny=(-scene cloth_drape -drape corners -res 5 -frames 1 "${c6[@]}")
run tiny_newton "${tiny[@]}" -solver newton -iters 50 -rtol 1e-11
run tiny_gs "${tiny[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-9        # 201 sweeps
run tiny_jacobi "${tiny[@]}" -solver gpbd -gpbd_omega 1.9 -iters 20000 -rtol 1e-8  # 931 sweeps
check tiny_gs --max-relative-residual 1e-9
check tiny_jacobi --max-relative-residual 1e-8
displacement_close tiny_gs tiny_newton 1e-6      # measured 6.8e-13
displacement_close tiny_jacobi tiny_newton 1e-6  # measured 1.1e-11
small_stretch=(-scene cloth_stretch -res 5 -mode dynamic -dt 0.003 -frames 2 "${c6[@]}")
run sstretch_newton "${small_stretch[@]}" -solver newton -iters 50 -rtol 1e-11
run sstretch_gs "${small_stretch[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-9  # 27, 33 sweeps
check sstretch_gs --max-relative-residual 1e-9
displacement_close sstretch_gs sstretch_newton 1e-6  # measured 7.8e-11

# --- the checker can fail: another stiffening factor (stretched) or k_bend (hanging) in the file's attributes -------
tamper() { # NAME INDEX FACTOR WHAT: a copy of NAME.h5 with sheet_cloth6[INDEX] scaled must fail the checker
  cp "$TMP/$1.h5" "$TMP/tampered_$1.h5"
  sed "s/$1\.h5/tampered_$1.h5/g" "$TMP/$1.xdmf" > "$TMP/tampered_$1.xdmf"
  "$PY" -c 'import sys, h5py; f = h5py.File(sys.argv[1], "r+"); v = f.attrs["sheet_cloth6"]; v[int(sys.argv[2])] *= float(sys.argv[3]); f.attrs["sheet_cloth6"] = v' \
    "$TMP/tampered_$1.h5" "$2" "$3"
  "$PY" "$HERE/check_output.py" "$TMP/tampered_$1.h5" --quiet > "$TMP/tampered_$1.log" 2>&1 && fail "the checker accepts another $4" || ok
}
tamper stretch_newton 3 1.05 "stiffening factor"
tamper hang_newton 4 1.05 "bending stiffness"

# --- ranks ------------------------------------------------------------------------------------------------------
rk=(-scene cloth_drape -drape corners -res 9 -frames 2 "${c6[@]}")
for s in pbng gs jacobi newton; do
  case $s in
    pbng) args=(-solver pbng -iters 40 -rtol 0) ;;
    gs) args=(-solver gpbd -gpbd_form gs -iters 20 -rtol 0) ;;
    jacobi) args=(-solver gpbd -gpbd_omega 1.5 -iters 20 -rtol 0) ;;
    newton) args=(-solver newton -iters 50 -rtol 1e-11) ;;
  esac
  run_on_ranks "rk_$s" "1 2" "${rk[@]}" "${args[@]}"
done
compare rk_pbng.2 rk_pbng.1 0      # measured bitwise
compare rk_gs.2 rk_gs.1 0          # measured bitwise
compare rk_jacobi.2 rk_jacobi.1 0  # measured bitwise
compare rk_newton.2 rk_newton.1 1e-10
check rk_newton.2 --max-relative-residual 1e-11

# --- checkpoint and restart: a run stopped mid-frame continues bitwise (the stretched sheet, dynamic) ---------------
stop_and_restart ckpt_pbng 2 30 "${small_stretch[@]}" -solver pbng -iters 25 -rtol 0
stop_and_restart ckpt_gs 1 12 "${small_stretch[@]}" -solver gpbd -gpbd_form gs -iters 10 -rtol 0

# --- refusals -----------------------------------------------------------------------------------------------------
bad=(-scene cloth_drape -drape corners -res 5 -frames 1 -sheet_model cloth6 -output "$TMP/bad.h5")
expect_error "xpbd" "does not handle the six-dimensional cloth stencils" "$PBNG" "${bad[@]}" -solver xpbd
expect_error "multilevel" "with -sheet_model cloth6" "$PBNG" "${bad[@]}" -solver pbng -multilevel 2
expect_error "contacts" "-sheet_model cloth6 with -contact" "$PBNG" "${bad[@]}" -contact
expect_error "stiffening without cloth6" "-sheet_stiffening" "$PBNG" -scene cloth_drape -res 5 -frames 1 -sheet_stiffening 10 -output "$TMP/bad.h5"
expect_error "negative stiffening" "stiffening factor must be >= 0" "$PBNG" "${bad[@]}" -sheet_stiffening -1
finish
