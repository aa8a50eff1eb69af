#!/usr/bin/env bash
# Meshes mixing element kinds (issue 16) end to end, on tests/data/mixed_box.py's cube (hexahedra, a
# layer of pyramids, prisms) clamped at x = 0 under gravity: 1, 2 and 3 ranks (oversubscribed) x 1
# and 2 threads give the 1 x 1 positions bitwise; check_output.py recomputes energy, residual, HRZ
# masses and the XDMF Mixed topology from the file, and rejects corrupted copies; a partitioned file
# (pbng-partition) gives the on-the-fly result bitwise; PBNG and Newton reach the same equilibrium;
# the seed's XPBD (xpbd_ho) runs on it and its result checks; -initial starts from a mixed result;
# hex27, tet10 and tet20 bodies side by side give a Mixed topology with hex27 and tet20 as sub-cells.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
mpi() { local n=$1; shift; "$MPIEXEC" -n "$n" --oversubscribe --bind-to none "$@"; }
check() { "$PY" "$HERE/check_output.py" "$@"; }
mesh="$PBNG_TEST_DATA/mixed_box_v41_binary.msh"
body=(-fix_group left -gravity 0,0,-9.8 -density 1000 -youngs 2e5 -material neohookean)

for n in 1 2 3; do
  for t in 1 2; do
    out="$TMP/mixed_${n}x${t}.h5"
    if mpi $n "$PBNG" -mesh "$mesh" "${body[@]}" -frames 2 -iters 25 -accel sor -threads $t -output "$out" > "$TMP/log" 2>&1; then ok
    else fail "mixed mesh on $n ranks x $t threads"; cat "$TMP/log"; continue; fi
    [ "$n$t" = 11 ] && continue
    check "$out" --compare "$TMP/mixed_1x1.h5" --rtol 0 --quiet && ok || fail "mixed mesh: $n ranks x $t threads differ from 1 x 1"
  done
done
grep -q "160 mixed hex8+prism6+pyramid5 elements" "$TMP/log" && ok || fail "the run's header does not name the mixed kinds: $(head -1 "$TMP/log")"
# (25 SOR sweeps a frame: measured relative residuals up to 0.29)
check "$TMP/mixed_3x2.h5" --frames 2 --max-relative-residual 0.85 --quiet && ok || fail "mixed mesh: independent check of the 3-rank result"
"$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r"); \
assert f.attrs["element"] == b"mixed" and f["mesh/elements"].shape == (160, 8) and sorted(set(f["mesh/element_types"][()])) == [5, 6, 7]' \
  "$TMP/mixed_3x2.h5" && ok || fail "mixed result: root element, /mesh/elements or /mesh/element_types"

# corrupted copies: the checker must fail, naming what is wrong
corrupt_copy() { # corrupt_copy SOURCE NAME "expected FAIL text" python-statement-on-f
  local src="$1" name="$2" msg="$3" stmt="$4" out rc=0
  cp "$TMP/$src.h5" "$TMP/$name.h5"
  sed "s/$src\.h5:/$name.h5:/g" "$TMP/$src.xdmf" > "$TMP/$name.xdmf"
  "$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], 'r+'); $stmt" "$TMP/$name.h5"
  out=$(check "$TMP/$name.h5" 2>&1) || rc=$?
  [ $rc -eq 1 ] && grep -qF -- "$msg" <<<"$out" && ok || fail "$name: checker exited $rc without '$msg': $out"
}
corrupt() { corrupt_copy mixed_1x1 "$@"; }
corrupt mixed_swapped_cell "/mesh/xdmf_cells: " "c = f['mesh/xdmf_cells']; v = c[()]; v[[1, 2]] = v[[2, 1]]; c[...] = v"
# a wedge in Gmsh's prism order (ParaView: negative volume, docs/high_order.md#checked-in-paraview)
corrupt mixed_gmsh_wedge "/mesh/xdmf_cells: " "t = f['mesh/element_types'][()]; e = int(np.flatnonzero(t == 6)[0]); \
o = sum(1 + {5: 8, 6: 6, 7: 5}[int(k)] for k in t[:e]); c = f['mesh/xdmf_cells']; v = c[()]; assert v[o] == 8; \
v[o + 1:o + 7] = v[o + 1 + np.array([0, 2, 1, 3, 5, 4])]; c[...] = v"
corrupt mixed_wrong_type "pyramid5 elements with det J <= 0" "t = f['mesh/element_types']; v = t[()]; i = int(np.flatnonzero(v == 6)[0]); v[i] = 7; t[...] = v; \
e = f['mesh/elements']; r = e[()]; r[i, 5] = -1; e[...] = r"
corrupt mixed_moved_node "recomputed residual" "p = f['frames/000002/positions']; v = p[()]; v[60] += 1e-6; p[...] = v"

# a partitioned file (each element's kind in /elements/kind) gives the on-the-fly partition's result
if "$PBNG_BIN/pbng-partition" -mesh "$mesh" -parts 2 -output "$TMP/mixed_parts.h5" > "$TMP/log" 2>&1; then ok
else fail "pbng-partition of the mixed mesh"; cat "$TMP/log"; fi
grep -q "mixed hex8+prism6+pyramid5" "$TMP/log" && ok || fail "pbng-partition does not name the mixed kinds: $(cat "$TMP/log")"
if mpi 2 "$PBNG" -mesh "$TMP/mixed_parts.h5" "${body[@]}" -frames 2 -iters 25 -accel sor -threads 1 -output "$TMP/mixed_file.h5" > "$TMP/log" 2>&1 &&
  mpi 2 "$PBNG" -mesh "$mesh" "${body[@]}" -frames 2 -iters 25 -accel sor -threads 1 -output "$TMP/mixed_fly.h5" > "$TMP/log2" 2>&1; then ok
else fail "mixed mesh from a partitioned file / on the fly"; cat "$TMP/log" "$TMP/log2"; fi
check "$TMP/mixed_file.h5" --max-relative-residual 0.85 --compare "$TMP/mixed_fly.h5" --rtol 0 --quiet && ok ||
  fail "mixed mesh: the partitioned file's result differs, or its residual bound"

# PBNG and Newton reach the same equilibrium (converged to 1e-10 relative residual; measured difference 1.7e-11)
if "$PBNG" -mesh "$mesh" "${body[@]}" -frames 1 -iters 20000 -rtol 1e-10 -accel chebyshev -output "$TMP/mixed_pbng.h5" > "$TMP/log" 2>&1 &&
  "$PBNG" -mesh "$mesh" "${body[@]}" -frames 1 -iters 50 -rtol 1e-10 -solver newton -output "$TMP/mixed_newton.h5" > "$TMP/log2" 2>&1; then ok
else fail "mixed mesh: PBNG / Newton to equilibrium"; cat "$TMP/log" "$TMP/log2"; fi
check "$TMP/mixed_newton.h5" --max-relative-residual 1e-10 --quiet && ok || fail "mixed mesh: Newton's equilibrium does not check"
check "$TMP/mixed_pbng.h5" --max-relative-residual 1e-10 --compare "$TMP/mixed_newton.h5" --rtol 5e-11 --quiet && ok \
  || fail "mixed mesh: PBNG's equilibrium differs from Newton's"

# -initial: a mixed result's last frame starts a new run of the same mesh
if "$PBNG" -mesh "$mesh" "${body[@]}" -frames 1 -iters 20 -initial "$TMP/mixed_1x1.h5" -output "$TMP/mixed_initial.h5" > "$TMP/log" 2>&1; then ok
else fail "-initial from a mixed result"; cat "$TMP/log"; fi
# (20 sweeps lower the residual: relative residual < 1, measured 0.84)
grep -q "^initial state: frame 2" "$TMP/log" && check "$TMP/mixed_initial.h5" --max-relative-residual 1 --quiet && ok || fail "-initial from a mixed result: $(head -3 "$TMP/log")"

# the seed's XPBD on every kind, so on the mixed mesh too
if "$PBNG" -mesh "$mesh" "${body[@]}" -solver xpbd_ho -frames 1 -iters 20 -output "$TMP/mixed_xpbd_ho.h5" > "$TMP/log" 2>&1; then ok
else fail "xpbd_ho on the mixed mesh"; cat "$TMP/log"; fi
# (XPBD lowers its constraints' residual, not the true one: measured relative residual 6.6)
check "$TMP/mixed_xpbd_ho.h5" --max-relative-residual 20 --quiet && ok || fail "xpbd_ho on the mixed mesh: independent check"

# hex27 and tet20 in a Mixed topology (docs/output.md): the Gmsh boxes of hex27, tet10 and tet20 side by
# side as separate bodies (one file), on 2 ranks; hex27 must appear as its 8 octant hexahedra (ParaView
# 5.11 reads no Hexahedron_27 in a Mixed list), tet20 as its 27 sub-tetrahedra, and the checker must
# accept exactly those: a mirrored sub-hexahedron (negative in ParaView) and a flipped sub-tetrahedron
# are rejected.
"$PY" "$PBNG_TEST_DATA/side_by_side.py" "$TMP/high_order.msh" 2 \
  "$PBNG_TEST_DATA"/{hex27,tet10,tet20}_v22_ascii.msh && ok || fail "side_by_side.py: hex27, tet10, tet20"
if mpi 2 "$PBNG" -mesh "$TMP/high_order.msh" "${body[@]}" -frames 1 -iters 10 -multilevel 1 -threads 1 -output "$TMP/high_order.h5" > "$TMP/log" 2>&1; then ok
else fail "hex27 + tet10 + tet20 side by side on 2 ranks"; cat "$TMP/log"; fi
# (10 single-level sweeps lower the residual: relative residual < 1, measured 0.81; the output layout is the point here)
check "$TMP/high_order.h5" --max-relative-residual 1 --quiet && ok || fail "hex27 + tet10 + tet20: independent check (XDMF Mixed with sub-cells)"
grep -q 'TopologyType="Mixed" NumberOfElements="2312"' "$TMP/high_order.xdmf" && ok \
  || fail "hex27 + tet10 + tet20: not 16 x 8 + 78 + 78 x 27 Mixed cells: $(grep -m1 Topology "$TMP/high_order.xdmf")"
# v: the Mixed values; first(T): where the first element of Gmsh type T starts in them
cells="t = f['mesh/element_types'][()]; c = f['mesh/xdmf_cells']; v = c[()]; \
first = lambda T: sum({12: 72, 11: 11, 29: 135}[int(k)] for k in t[:int(np.flatnonzero(t == T)[0])])"
corrupt_copy high_order mixed_mirrored_subhex "/mesh/xdmf_cells: 8 values differ" \
  "$cells; o = first(12); assert v[o] == 9; v[o + 1:o + 9] = v[o + 1 + np.array([1, 0, 3, 2, 5, 4, 7, 6])]; c[...] = v"
corrupt_copy high_order mixed_flipped_subtet "sub-tetrahedra with non-positive volume" \
  "$cells; o = first(29); assert v[o] == 6; v[o + 1:o + 3] = v[o + np.array([2, 1])]; c[...] = v"
finish
