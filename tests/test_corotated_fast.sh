#!/usr/bin/env bash
# The corotated fast path (PBNG sweeps on linear tetrahedra: two branch-free Newton polar steps per visit from the
# element's warm start, in SIMD across a node's elements; residuals and energies read the warm starts; the robust
# polar decomposition for whatever the fixed steps decline; docs/equations.md "Corotated R(F)"):
#  - PBNG converged to 1e-12 reaches the equilibrium of -solver newton (whose Jacobian uses the robust polar
#    decomposition from the identity) on a box (single-level sweeps), a bar (single-level sweeps) and a Gmsh mesh
#    (two levels: sweeps as the smoother), and the independent checker (its own SVD-based rotation) finds the
#    PBNG results converged;
#  - the bar after a fixed number of sweeps is bitwise the same on 1 rank x 1 thread, 1 x 2, 2 x 2 and 3 x 1 (a rank
#    holding an element moves its warm start at other ranks' visits too; before: 8e-16 apart).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
D="$PBNG_TEST_DATA"

# positions of every frame of A against B, largest difference relative to B's largest |x| below TOL; prints it
agree() { # A B TOL
  "$PY" - "$@" <<'EOF'
import sys, h5py, numpy as np
a, b, tol = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), float(sys.argv[3])
assert sorted(a["frames"]) == sorted(b["frames"]), (sorted(a["frames"]), sorted(b["frames"]))
d = max(np.abs(a["frames"][k]["positions"][()] - b["frames"][k]["positions"][()]).max() / np.abs(b["frames"][k]["positions"][()]).max()
        for k in b["frames"])
print(f"{sys.argv[1]} vs {sys.argv[2]}: positions differ by {d:.3e} (relative), bound {tol:.1e}")
sys.exit(0 if d <= tol else 1)
EOF
}

# name|bound on the difference to Newton (about 3x the measured one)|scene options|PBNG solver options
cases=(
  "box|3e-14|-scene box_stretch_twist -res 6 -frames 1|-solver pbng -accel chebyshev -iters 2000" # measured 1.0e-14
  "bar|4.5e-12|-scene bar_gravity -res 4 -bar_length 2 -frames 1|-solver pbng -accel chebyshev -iters 5000" # measured 1.5e-12
  "gmsh|8e-15|-mesh $D/cube_fine_v41.msh -fix_group left -gravity 0,-9.8,0 -youngs 1e4 -frames 1|-multilevel 2 -iters 300" # measured 2.6e-15
)
for c in "${cases[@]}"; do
  IFS='|' read -r name bound scene solver <<<"$c"
  # shellcheck disable=SC2086
  run "${name}_pbng" $scene -material corotated $solver -rtol 1e-12 -residual_every 1 -threads 2
  # shellcheck disable=SC2086
  run "${name}_newton" $scene -material corotated -solver newton -iters 100 -rtol 1e-12 -residual_every 1 -threads 2
  grep -q "^frame.* converged$" "$TMP/${name}_pbng.log" && ok || fail "$name: PBNG did not converge: $(grep '^frame' "$TMP/${name}_pbng.log")"
  check "${name}_pbng" --max-relative-residual 3e-12 # PBNG stops below 1e-12; the checker's own residual agrees to round-off
  agree "$TMP/${name}_pbng.h5" "$TMP/${name}_newton.h5" "$bound" && ok || fail "$name: PBNG's corotated equilibrium is not Newton's"
done

# rank and thread independence of the sweeps' warm starts (a fixed number of iterations)
bar=(-scene bar_gravity -res 4 -bar_length 2 -frames 1 -material corotated -solver pbng -accel chebyshev -iters 300 -rtol 0)
for rt in 1x1 1x2 2x2 3x1; do
  if mpi "${rt%x*}" "$PBNG" "${bar[@]}" -threads "${rt#*x}" -output "$TMP/bar_$rt.h5" > "$TMP/bar_$rt.log" 2>&1; then ok
  else fail "bar on $rt ranks x threads"; cat "$TMP/bar_$rt.log"; fi
done
# threads: bitwise (an element's visits, warm starts and batches do not depend on the thread); ranks: bitwise (every
# copy of an element's warm start moves at every visit of its nodes; before pbng_problem_refresh_rotations 8.8e-16, 8.2e-16)
agree "$TMP/bar_1x2.h5" "$TMP/bar_1x1.h5" 0 && ok || fail "bar: 2 threads differ from 1"
for rt in 2x2 3x1; do
  agree "$TMP/bar_$rt.h5" "$TMP/bar_1x1.h5" 0 && ok || fail "bar: $rt ranks x threads differ from 1 x 1"
done
finish
