#!/usr/bin/env bash
# Rank- and thread-count independence for every element kind other than tet4 (issue 16): 1, 2, 3
# and 4 ranks (oversubscribed) x 1 and 2 threads give the same positions as 1 rank x 1 thread,
# bitwise for the neo-Hookean models (node sums follow the global element order; a rank changes
# nothing but who computes them; each 4-rank result also checked by check_output.py), within 1e-12 for the corotated one; Newton converged to 1e-11
# (its block-Jacobi preconditioner depends on the partition) within 1e-8. Also mesh files: a Gmsh P2
# box on 1 and 2 ranks, and a Q2 Gmsh file through pbng-partition.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_WAIT_POLICY=passive # oversubscribed: threads must not spin at barriers
cases=(
  "tet10|0|-scene box_stretch_twist -element tet10 -res 4 -frames 2 -iters 20 -accel sor"
  "tet20|0|-scene bar_gravity -element tet20 -tet_split six -res 2 -frames 1 -iters 30 -material stable_neohookean"
  "hex8|1e-12|-scene box_stretch_twist -element hex8 -res 6 -frames 2 -iters 20 -material corotated"
  "hex27|0|-scene bar_gravity -element hex27 -res 3 -frames 1 -iters 20"
  "tet10_newton|1e-8|-scene bar_gravity -element tet10 -res 3 -frames 1 -iters 60 -rtol 1e-11 -solver newton"
)
same_positions() { # reference, other, rtol: every frame's positions agree
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import sys, h5py, numpy as np
a, b, rtol = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), float(sys.argv[3])
assert a.attrs["element"] == b.attrs["element"]
for path in ("mesh/rest_positions", "mesh/elements", "mesh/fixed_nodes"):
    assert np.array_equal(a[path][...], b[path][...]), path
assert sorted(a["frames"]) == sorted(b["frames"])
for fr in a["frames"]:
    xa, xb = a["frames"][fr]["positions"][...], b["frames"][fr]["positions"][...]
    err = np.abs(xa - xb).max() / max(1.0, np.abs(xa).max())
    assert err <= rtol, f"frame {fr}: relative difference {err:.3e} > {rtol}"
PYEOF
}
for c in "${cases[@]}"; do
  IFS='|' read -r name rtol args <<<"$c"
  for n in 1 2 3 4; do
    for t in 1 2; do
      [ "$name" = tet10_newton ] && [ "$t" = 2 ] && continue
      out="$TMP/${name}_${n}x${t}.h5"
      # shellcheck disable=SC2086
      if "$MPIEXEC" -n $n --oversubscribe --bind-to none "$PBNG" $args -threads $t -output "$out" > "$TMP/log" 2>&1; then ok
      else fail "$name on $n ranks x $t threads"; cat "$TMP/log"; continue; fi
      [ "$n$t" = "11" ] && continue
      same_positions "$TMP/${name}_1x1.h5" "$out" "$rtol" && ok || fail "$name: $n ranks x $t threads differ from 1 x 1 (allowed $rtol)"
    done
  done
  "$PY" "$HERE/check_output.py" "$TMP/${name}_4x1.h5" --quiet && ok || fail "$name: independent check of the 4-rank result"
done
# a partitioned file of P2 elements (pbng-partition) gives the on-the-fly partition's result bitwise
if "$PBNG_BIN/pbng-partition" -scene bar_gravity -element tet10 -res 3 -parts 3 -output "$TMP/p2_parts.h5" > "$TMP/log" 2>&1; then ok
else fail "pbng-partition of a P2 bar"; cat "$TMP/log"; fi
if "$MPIEXEC" -n 3 --oversubscribe --bind-to none "$PBNG" -scene bar_gravity -mesh "$TMP/p2_parts.h5" -frames 1 -iters 20 -threads 1 \
  -output "$TMP/p2_file.h5" > "$TMP/log" 2>&1 &&
  "$MPIEXEC" -n 3 --oversubscribe --bind-to none "$PBNG" -scene bar_gravity -element tet10 -res 3 -frames 1 -iters 20 -threads 1 \
    -output "$TMP/p2_fly.h5" > "$TMP/log2" 2>&1; then ok
else fail "P2 bar from a partitioned file / on the fly"; cat "$TMP/log" "$TMP/log2"; fi
same_positions "$TMP/p2_fly.h5" "$TMP/p2_file.h5" 0 && ok || fail "P2 bar: the partitioned file's result differs"
# meshes read from files (the readers of docs/high_order.md): a Gmsh P2 box on 1 and 2 ranks gives the
# same positions; a Q2 hexahedral Gmsh file partitioned by pbng-partition gives the on-the-fly result
file_args=(-fix_box -1,-1,-1,0,1,1 -gravity 0,0,-9.8 -youngs 2e3 -frames 1 -iters 20 -threads 1)
for n in 1 2; do
  if "$MPIEXEC" -n $n --oversubscribe --bind-to none "$PBNG" -mesh "$PBNG_TEST_DATA/tet10_v41_binary.msh" "${file_args[@]}" \
    -output "$TMP/p2_msh_$n.h5" > "$TMP/log" 2>&1; then ok
  else fail "P2 Gmsh file on $n ranks"; cat "$TMP/log"; fi
done
same_positions "$TMP/p2_msh_1.h5" "$TMP/p2_msh_2.h5" 0 && ok || fail "P2 Gmsh file: 2 ranks differ from 1"
"$PY" "$HERE/check_output.py" "$TMP/p2_msh_2.h5" --quiet && ok || fail "P2 Gmsh file: independent check of the 2-rank result"
if "$PBNG_BIN/pbng-partition" -mesh "$PBNG_TEST_DATA/hex27_v22_binary.msh" -parts 2 -output "$TMP/q2_parts.h5" > "$TMP/log" 2>&1; then ok
else fail "pbng-partition of a Q2 Gmsh file"; cat "$TMP/log"; fi
if "$MPIEXEC" -n 2 --oversubscribe --bind-to none "$PBNG" -mesh "$TMP/q2_parts.h5" "${file_args[@]}" -output "$TMP/q2_file.h5" > "$TMP/log" 2>&1 &&
  "$MPIEXEC" -n 2 --oversubscribe --bind-to none "$PBNG" -mesh "$PBNG_TEST_DATA/hex27_v22_binary.msh" "${file_args[@]}" \
    -output "$TMP/q2_fly.h5" > "$TMP/log2" 2>&1; then ok
else fail "Q2 Gmsh file partitioned / on the fly"; cat "$TMP/log" "$TMP/log2"; fi
same_positions "$TMP/q2_fly.h5" "$TMP/q2_file.h5" 0 && ok || fail "Q2 Gmsh file: the partitioned file's result differs"
finish
