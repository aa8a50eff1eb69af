#!/usr/bin/env bash
# Bad input: a clear message naming the problem, a non-zero exit, and no partial or corrupted output.
source "$(dirname "$0")/lib.sh"
o="$TMP/out.h5"
run() { "$PBNG" -scene box -res 3 -frames 1 -iters 2 "$@"; }
# at_rest FILE: the result of a good run: the unloaded, unconstrained box stays at its rest positions
at_rest() { "$PY" -c 'import h5py, sys, numpy as np; f = h5py.File(sys.argv[1], "r"); X = f["mesh/rest_positions"][()]; \
sys.exit(0 if len(f["frames"]) == 2 and all(np.array_equal(f["frames"][k]["positions"][()], X) for k in f["frames"]) else 1)' "$1"; }
expect_error "unknown material" 'unknown material "rubber"' run -material rubber -output "$o"
expect_error "unknown scene" 'unknown scene "cube"' "$PBNG" -scene cube -output "$o"
expect_error "unknown accel" 'unknown acceleration "fast"' run -accel fast -output "$o"
expect_error "unknown mode" 'unknown mode "implicit"' run -mode implicit -output "$o"
expect_error "unknown solver" 'unknown solver "multigrid"' run -solver multigrid -output "$o"
expect_error "malformed gravity" '-gravity needs exactly 3' run -gravity 0,-9.8 -output "$o"
expect_error "non-numeric gravity" 'gravity' run -gravity 0,abc,1 -output "$o"
expect_error "E <= 0" 'need E > 0' run -youngs -5 -output "$o"
expect_error "nu = 0.5" '-1 < nu < 0.5' run -poisson 0.5 -output "$o"
expect_error "nu = -1" '-1 < nu < 0.5' run -poisson -1 -output "$o"
expect_error "density" '-density 0' run -density 0 -output "$o"
expect_error "dt" '-dt -1' run -dt -1 -output "$o"
expect_error "iters" '-iters 0' run -iters 0 -output "$o"
expect_error "res" '-res 1' "$PBNG" -scene box -res 1 -output "$o"
expect_error "omega" '-omega 2.5' run -accel sor -omega 2.5 -output "$o"
expect_error "fix_box arity" '-fix_box needs 6' run -fix_box 0,0,0,1,1 -output "$o"
expect_error "fix_box empty" 'selects no node' run -fix_box 5,5,5,6,6,6 -output "$o"
expect_error "unknown group" 'no node set' run -fix_group nosuchgroup -output "$o"
expect_error "-cells not an integer" '-cells "4,x,4": value 2 is not an integer' "$PBNG" -scene box -cells 4,x,4 -output "$o"
expect_error "-cells two values" '-cells "4,4": 2 values (need three: NX,NY,NZ)' "$PBNG" -scene box -cells 4,4 -output "$o"
expect_error "-cells [ (fuzzing: PETSc's array parser leaked on it)" '-cells "[": value 1 is not an integer' "$PBNG" -scene box -cells "[" -output "$o"
expect_error "-cells out of range" '-cells: 0 cells along axis 1' "$PBNG" -scene box -cells 4,0,4 -output "$o"
# conflicting options: each applies only where the others do not say otherwise
expect_error "-res with -mesh" '-res 4 sizes a generated scene mesh' "$PBNG" -scene box -res 4 -mesh "$PBNG_TEST_DATA/cube_v22_ascii.msh" -output "$o"
expect_error "-bar_length without the bar" '-bar_length is for the generated bar' run -bar_length 3 -output "$o"
expect_error "-bar_length with -mesh" '-bar_length is for the generated bar' "$PBNG" -scene bar_gravity -mesh "$PBNG_TEST_DATA/cube_v22_ascii.msh" -bar_length 3 -output "$o"
expect_error "-weak_stiffness without the blocks" '-weak_stiffness is for the generated blocks' run -weak_stiffness 10 -output "$o"
expect_error "-omega without sor" '-omega is for -accel sor (the acceleration is chebyshev)' run -accel chebyshev -omega 1.5 -output "$o"
expect_error "-rho without chebyshev" '-rho and -gamma are for -accel chebyshev (the acceleration is sor)' run -accel sor -rho 0.9 -output "$o"
expect_error "-gamma without chebyshev" '-rho and -gamma are for -accel chebyshev (the acceleration is none)' run -accel none -gamma 1 -output "$o"
expect_error "-omega with newton" '-omega, -rho and -gamma are for -solver pbng (the solver is newton)' run -solver newton -omega 1 -output "$o"
expect_error "-accel with xpbd" '-accel is for -solver pbng' run -solver xpbd -accel sor -output "$o"
expect_error "-residual_every with -rtol 0" '-residual_every is for -rtol' run -rtol 0 -residual_every 2 -output "$o"
expect_error "-initial_state with -initial" 'both say where the nodes start' run -initial_state flat -initial "$TMP/earlier.h5" -output "$o"
expect_error "-restart with -initial" '-restart and -initial exclude each other' run -restart auto -initial "$TMP/earlier.h5" -output "$o"
expect_error "-xpbd_order with pbng" '-xpbd_order is for -solver pbd' run -xpbd_order weak_first -output "$o"
expect_error "-res with -mesh (partitioner)" '-res 4 sizes a generated scene mesh' "$(dirname "$PBNG")/pbng-partition" -scene box -res 4 \
  -mesh "$PBNG_TEST_DATA/cube_v22_ascii.msh" -parts 2 -output "$o"
expect_error "unknown option" 'unknown option -fram' run -fram 3 -output "$o"
"$PBNG" -help > "$TMP/help.txt" 2>&1 && grep -q -- '-youngs' "$TMP/help.txt" && ok || fail "pbng -help without a scene"
run -output "$TMP/ol.h5" -options_left > /dev/null 2>&1 && ok || fail "-options_left (read at finalize) rejected"
at_rest "$TMP/ol.h5" && ok || fail "-options_left: the unloaded box moved"
expect_error "no mesh" 'give -scene NAME or -mesh FILE' "$PBNG" -output "$o"
expect_error "missing mesh file" 'nosuch.msh' "$PBNG" -mesh "$TMP/nosuch.msh" -output "$o"
expect_error "unsupported mesh format" 'mesh.obj' "$PBNG" -mesh "$TMP/mesh.obj" -output "$o"
expect_error "missing output dir" "$TMP/nodir/x.h5" run -output "$TMP/nodir/x.h5"
touch "$TMP/afile"
expect_error "output under a file" "$TMP/afile/x.h5" run -output "$TMP/afile/x.h5"
for f in "$PBNG_TEST_DATA"/bad_*; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  # a TetGen pair is read .node first: the message names whichever of the two files is bad
  case "$name" in *.ele | *.node) name="${name%.*}." ;; esac
  expect_error "malformed $(basename "$f")" "$name" "$PBNG" -mesh "$f" -output "$o"
done
# the readers of high-order and non-tetrahedral elements (docs/high_order.md): what each bad file says
d="$PBNG_TEST_DATA"
expect_error "mixed kinds, a tetrahedron inverted" 'bad_mixed_inverted.msh: element 0 (record 1, tet4) is inverted in the rest state at quadrature point 0' \
  "$PBNG" -mesh "$d/bad_mixed_inverted.msh" -output "$o"
# a mesh mixing kinds (tests/data/mixed_box.py): the linear-tetrahedron solvers refuse it (multilevel PBNG makes its
# coarse levels from its tetrahedra: tests/test_defaults.sh); a file with sheets has no automatic coarse levels
mixed=("$PBNG" -mesh "$d/mixed_box_v22_ascii.msh" -fix_group left -frames 1 -iters 2 -output "$o")
expect_error "pbd on mixed kinds" '-solver pbd (the paper'"'"'s Sec. 6 baseline) works on linear tetrahedra and sheets (tri3, bend4); this mesh has mixed hex8+prism6+pyramid5 elements (-solver xpbd_ho takes every kind)' \
  "${mixed[@]}" -solver pbd
expect_error "multilevel on a file with sheets" "-multilevel 2: coarse levels are made from a file of volume elements only; give this mixed tet4+tri3+bend4 mesh's coarser levels with -mesh_levels" \
  "$PBNG" -mesh "$d/sheet_block_v41_ascii.msh" -fix_group fixed -frames 1 -multilevel 2 -output "$o"
expect_error "tet10 record short of a node" 'bad_tet10_node_count.msh:19 ($Elements, element 1): element type 11 (10-node tetrahedron) needs 10 node tags, but the record lists 9' \
  "$PBNG" -mesh "$d/bad_tet10_node_count.msh" -output "$o"
expect_error "hex27 node out of range" 'bad_hex27_node_index.msh:249 ($Elements, element 10): references node tag 9999' \
  "$PBNG" -mesh "$d/bad_hex27_node_index.msh" -output "$o"
expect_error "inverted hex8" 'bad_hex8_inverted.msh: element 2 (record 11, hex8) is inverted in the rest state at quadrature point 0' \
  "$PBNG" -mesh "$d/bad_hex8_inverted.msh" -output "$o"
expect_error "tet10 inverted at a quadrature point" 'bad_tet10_degenerate.msh: element 0 (record 1, tet10) is inverted in the rest state at quadrature point 1' \
  "$PBNG" -mesh "$d/bad_tet10_degenerate.msh" -output "$o"
expect_error "TetGen -o2 row short of a node" "bad_tetgen_o2_short.ele:3: an element row 'index, 10 nodes, 0 attributes': expected 11 values, found 10" \
  "$PBNG" -mesh "$d/bad_tetgen_o2_short" -output "$o"
expect_error "unsupported Gmsh type" 'unsupported element type 18 (15-node prism)' "$PBNG" -mesh "$d/bad_v41_prism15.msh" -output "$o"
[ ! -e "$o" ] && ok || fail "a failed run left $o behind"
# -dry_run: validates as a run would (the boundary sets against the mesh too), writes nothing
dry="$TMP/dry/none.h5"
"$PBNG" -scene box -res 6 -output "$dry" -checkpoint_every 1 -dry_run > "$TMP/dry.log" 2>&1 && ok || fail "dry run of valid options: $(cat "$TMP/dry.log")"
grep -q "dry run: the options and the problem are valid" "$TMP/dry.log" && ok || fail "dry run line missing"
[ ! -e "$TMP/dry" ] && ok || fail "-dry_run created $TMP/dry"
expect_error "dry run: a set without nodes" 'boundary condition bc0 selects no node of the mesh' "$PBNG" -scene box -res 6 -bc0_box 5,5,5,6,6,6 -output "$dry" -dry_run
expect_error "dry run: impossible material" '-poisson 0.6: need E > 0 and -1 < nu < 0.5' "$PBNG" -scene box -res 6 -poisson 0.6 -output "$dry" -dry_run
[ ! -e "$TMP/dry" ] && ok || fail "a refused -dry_run created $TMP/dry"
ls "$TMP" | grep -q partial && fail "a .partial file was left behind" || ok
# a failing run never damages an earlier result under the requested name
run -output "$o" > /dev/null && ok || fail "good run"
at_rest "$o" && ok || fail "good run: the unloaded box moved"
sum_before=$(md5sum < "$o")
expect_error "bad run over a good result" 'unknown material' run -material rubber -output "$o"
[ "$(md5sum < "$o")" = "$sum_before" ] && ok || fail "earlier result was modified"
# an interrupted run (SIGTERM mid-way: once its .partial output exists) leaves the earlier result untouched
"$PBNG" -scene box -res 12 -frames 100000 -iters 5 -output "$o" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$o.partial" ] && break; sleep 0.1; done
[ -e "$o.partial" ] && ok || fail "the long run did not start writing within 30 s"
sleep 0.3 # a few frames into it
kill -TERM $pid; wait $pid 2>/dev/null || true
[ "$(md5sum < "$o")" = "$sum_before" ] && ok || fail "interrupted run modified the earlier result"
finish
