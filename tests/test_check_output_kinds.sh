#!/usr/bin/env bash
# tests/check_output.py on every element kind pbng generates or reads: its own definitions first (--self-test:
# Lagrange nodes against Gmsh's files, shape functions, quadrature exactness), then pbng's results of
# each kind recomputed from the file alone (energy, residual, HRZ masses, det J, XDMF cells and
# topology), the patch test per kind, and corrupted copies that it must reject.
source "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
check() { "$PY" "$HERE/check_output.py" "$@"; }

check --self-test --quiet && ok || fail "checker self-test"

run() {   # run NAME BOUND pbng-options...: a short bar/box run (-res 3 unless -mesh), then the independent check with
          # relative residuals <= BOUND (30 sweeps a frame lower the residual: < 1, or about 3x the measured one)
  local name="$1" bound="$2" res=(-res 3); shift 2
  [[ " $* " == *" -mesh "* ]] && res=()
  if "$PBNG" "${res[@]}" -frames 2 -iters 30 -threads 1 "$@" -output "$TMP/$name.h5" > "$TMP/$name.log" 2>&1; then ok
  else fail "$name: pbng run"; cat "$TMP/$name.log"; return; fi
  check "$TMP/$name.h5" --frames 2 --max-relative-residual "$bound" --quiet && ok || fail "$name: independent check"
}
run tet4_five 1 -scene bar_gravity -element tet4 -tet_split five                                    # measured 0.94
run tet4_six 1 -scene bar_gravity -element tet4 -tet_split six                                      # 0.94
run tet10 1 -scene bar_gravity -element tet10                                                       # 0.97
run tet10_six 2.5e-3 -scene box_stretch_twist -element tet10 -tet_split six -material stable_neohookean # 8.4e-4
run tet20 1 -scene bar_gravity -element tet20                                                       # 0.98
run hex8 1 -scene bar_gravity -element hex8 -material corotated                                     # 0.92
run hex27 1 -scene bar_gravity -element hex27                                                       # 0.97
run hex27_dynamic 1.2e-2 -scene bar_gravity -element hex27 -mode dynamic                            # 4.2e-3
run tet20_dynamic 0.2 -scene box_stretch_twist -element tet20 -mode dynamic -material corotated     # 7.1e-2
# prisms and pyramids are not generated: the Gmsh boxes of tests/data
run prism6 1 -mesh "$PBNG_TEST_DATA/prism6_v41_binary.msh" -fix_group left -gravity 0,0,-9.8         # 0.997
run pyramid5 1 -mesh "$PBNG_TEST_DATA/pyramid5_v41_binary.msh" -fix_group left -gravity 0,0,-9.8     # 0.75

# the patch test per kind: all six faces of a box follow one affine motion, which every kind
# reproduces exactly inside (checked from the file: the affine fit and the recomputed residual)
motion="-bcK_rotation_rate 0.5 -bcK_axis 1,1,0 -bcK_center 0.5,0.5,0.5 -bcK_scale_rate 0.3,-0.1,0.2 -bcK_velocity 0.1,0,0"
faces=(0,0,0,0,1,1 1,0,0,1,1,1 0,0,0,1,0,1 0,1,0,1,1,1 0,0,0,1,1,0 0,0,1,1,1,1)
patch_args=()
for k in 0 1 2 3 4 5; do patch_args+=(-bc${k}_box "${faces[$k]}" ${motion//bcK/bc$k}); done
for kind in tet10 tet20 hex8 hex27; do
  if "$PBNG" -scene box -res 3 -element $kind -frames 1 -iters 5000 -rtol 1e-11 -accel chebyshev -threads 1 \
      "${patch_args[@]}" -output "$TMP/patch_$kind.h5" > "$TMP/log" 2>&1; then ok; else fail "patch run $kind"; cat "$TMP/log"; fi
  check "$TMP/patch_$kind.h5" --frames 1 --patch-test --max-relative-residual 1e-10 --quiet && ok || fail "patch test $kind"
done

# corrupted copies: each must fail with a message naming what is wrong
corrupt() {   # corrupt NAME SOURCE "expected FAIL text" python-statement-on-f
  local name="$1" src="$2" msg="$3" stmt="$4" out rc=0
  cp "$TMP/$src.h5" "$TMP/$name.h5"
  sed "s/$src\.h5:/$name.h5:/g" "$TMP/$src.xdmf" > "$TMP/$name.xdmf"
  "$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], 'r+'); $stmt" "$TMP/$name.h5"
  out=$(check "$TMP/$name.h5" 2>&1) || rc=$?
  if [ $rc -ne 1 ]; then fail "$name: checker exited $rc on a corrupted file: $out"; return; fi
  grep -qF -- "$msg" <<<"$out" && ok || fail "$name: no '$msg' in: $out"
}
corrupt tet10_swapped_xdmf tet10 "not in Tetrahedron_10 (VTK) node order" \
  "c = f['mesh/xdmf_cells']; v = c[()]; v[:, [8, 9]] = v[:, [9, 8]]; c[...] = v"
corrupt hex27_gmsh_order_xdmf hex27 "not in Hexahedron_27 (VTK) node order" \
  "f['mesh/xdmf_cells'][...] = f['mesh/elements'][()]"
corrupt prism6_gmsh_order_xdmf prism6 "not in Wedge (VTK) node order" \
  "f['mesh/xdmf_cells'][...] = f['mesh/elements'][()]"
corrupt tet20_flipped_subcell tet20 "sub-tetrahedra with non-positive volume" \
  "c = f['mesh/xdmf_cells']; v = c[()]; v[5, [0, 1]] = v[5, [1, 0]]; c[...] = v"
corrupt hex8_moved_node hex8 "recomputed residual" \
  "p = f['frames/000002/positions']; v = p[()]; v[40] += 1e-6; p[...] = v"
corrupt tet20_swapped_edge_nodes tet20 "det J <= 0" \
  "e = f['mesh/elements']; v = e[()]; v[:, [4, 5]] = v[:, [5, 4]]; e[...] = v"
corrupt hex27_inverted hex27 "det J <= 0" \
  "e = f['mesh/elements']; v = e[()]; v[3, :] = v[3, [4, 5, 6, 7, 0, 1, 2, 3, 16, 17, 10, 18, 12, 19, 14, 15, 8, 9, 11, 13, 25, 21, 22, 23, 24, 20, 26]]; e[...] = v"
corrupt hex27_dynamic_energy hex27_dynamic "recomputed energy" \
  "g = f['frames/000001']; g.attrs['energy'] *= 1 + 1e-8; g['positions'].attrs['energy'] *= 1 + 1e-8"
corrupt tet10_stiffer tet10_six "recomputed energy" \
  "f.attrs['youngs_modulus'] *= 1.001"
# the XDMF's topology type
cp "$TMP/tet10.h5" "$TMP/tet10_type.h5"
sed -e 's/tet10\.h5:/tet10_type.h5:/g' -e 's/"Tetrahedron_10"/"Tetrahedron"/' "$TMP/tet10.xdmf" > "$TMP/tet10_type.xdmf"
out=$(check "$TMP/tet10_type.h5" 2>&1) && fail "wrong topology type accepted" || { grep -qF "expected Tetrahedron_10" <<<"$out" && ok || fail "wrong topology type: $out"; }
finish
