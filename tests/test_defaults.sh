#!/usr/bin/env bash
# Fast and accurate by default on every input (issue 39 item 1; docs/options.md#the-default-tolerance-and-solver,
# docs/multilevel.md#automatic-levels): with a tolerance and no solver option, a quasistatic run is multilevel
# PBNG with automatic levels (-multilevel auto) wherever multilevel PBNG runs the problem, and says so; elsewhere
# single-level PBNG, and the defaults: line says why. Each input runs its default to the tolerance on a small
# mesh and its result passes the independent checker (tests/check_output.py recomputes every frame's residual):
#  - a Gmsh file of linear tetrahedra: a thin-walled tube (one element through its 0.1 wall) sagging under
#    gravity, coarsened by edge collapses; -multilevel 3 coarsens the wall to 3 levels (not refused); the default's
#    nonlinear GMRES over the cycles takes fewer of them than plain FAS cycles (-multilevel_ngmres 0); its coarsest level
#    keeps its matrix over a cycle's Newton steps (at most one a cycle; -multilevel_coarse_reuse 0: one a step);
#  - a TetGen file, a TetGen file of P2 tetrahedra (its corner mesh first: p-multigrid); a generated box; P2 tetrahedra (p-multigrid first); hexahedra; StVK; a weak-constraint file;
#    a released set; elastoplasticity;
#  - -multilevel auto given with another solver option (-accel) still chooses the levels;
#  - a point load: multilevel, Newton's equilibrium;
#  - files of other volume kinds: hex8, mixed hex8/prism6/pyramid5 (their tetrahedra coarsened), hex27 (hex8 first);
#  - no multilevel, with the reason: a file with sheets (a partitioned file: tests/test_partition.sh);
#  - -multilevel X that is neither auto nor a level count is refused.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
cd "$TMP"

# defaulted NAME EXPECT OPTIONS...: a run with the defaults; its defaults: line starts with EXPECT ("multilevel PBNG, 2
# levels" or "single-level PBNG, not multilevel: REASON"), every frame converged, and the checker agrees at 1e-3 (or
# the absolute floor the run printed: the checker recomputes every frame's residual and compares it with the stored one)
defaulted() {
  local name=$1 expect=$2
  shift 2
  "$PBNG" "$@" -threads 1 -output "$TMP/$name.h5" > "$TMP/$name.log" 2>&1 && ok || { fail "$name: the run failed"; tail -3 "$TMP/$name.log"; return; }
  grep -q "^defaults: $expect" "$TMP/$name.log" && ok || fail "$name: not '$expect': $(grep '^defaults' "$TMP/$name.log")"
  ! grep -q "NOT converged" "$TMP/$name.log" && grep -q "tolerance -rtol 0.001: every frame reached it" "$TMP/$name.log" && ok ||
    fail "$name: a frame did not reach the tolerance: $(grep '^frame' "$TMP/$name.log" | tail -2)"
  local floor
  floor=$(sed -n 's/^defaults: each frame to -rtol 0.001 or -atol \([^ ]*\) .*/\1/p' "$TMP/$name.log")
  "$PY" "$HERE/check_output.py" "$TMP/$name.h5" --quiet && ok || fail "$name: independent check"
  frames_converged 1e-3 "$floor" "$TMP/$name.h5" && ok || fail "$name: a frame outside -rtol 1e-3 and -atol $floor"
}

# --- mesh files of linear tetrahedra: coarsened automatically ------------------------------------------------------
cat > tube.geo << 'EOF'
SetFactory("OpenCASCADE");
Cylinder(1) = {0, 0, 0, 2, 0, 0, 0.5};
Cylinder(2) = {0, 0, 0, 2, 0, 0, 0.4};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = 0.12;
Physical Volume("tube") = {3};
EOF
command -v gmsh > /dev/null || skip "gmsh is not installed (.ci/install-deps installs it)"
gmsh -3 -format msh22 tube.geo -o tube.msh > gmsh.log 2>&1 && ok || { fail "gmsh"; cat gmsh.log; }
TUBE=(-mesh tube.msh -fix_box 0,-1,-1,0,1,1 -gravity 0,-9.8,0 -youngs 1e5 -frames 1)
# 1,035 nodes -> 202 (at most 500: the coarsest); single-level PBNG ran 1,000 sweeps to 0.5 here before
defaulted tube "multilevel PBNG, 2 levels, plain PBNG smoother" "${TUBE[@]}"
grep -q "^level 0 (tube.msh coarsened 1 time): 202 nodes" tube.log && ok || fail "tube: the coarse level: $(grep '^level' tube.log)"
# nonlinear GMRES over the last 4 cycles (the default -multilevel_ngmres 4) against plain FAS cycles: fewer cycles to the
# same tolerance (measured 9 against 20), both converged
grep -q "^defaults: multilevel PBNG, 2 levels, plain PBNG smoother, nonlinear GMRES over 4 cycles" tube.log && ok || fail "tube: $(grep '^defaults: m' tube.log)"
run tube_plain "${TUBE[@]}" -multilevel auto -multilevel_ngmres 0 -threads 1
cycles() { sed -n 's/^frame .* iters *\([0-9]*\) .* converged$/\1/p' "$TMP/$1.log"; }
[ -n "$(cycles tube_plain)" ] && [ -n "$(cycles tube)" ] && [ "$(cycles tube)" -lt "$(cycles tube_plain)" ] && [ "$(cycles tube)" -le 14 ] && ok ||
  fail "tube: nonlinear GMRES took $(cycles tube) cycles, plain cycles $(cycles tube_plain) (measured 9 and 20)"
# the coarsest level's matrix kept over each cycle's Newton steps (-multilevel_coarse_reuse auto: its 202 nodes are more than
# a tenth of the 1,035) against one assembled at every step (0): at most one matrix a cycle, more than one with 0
matrices() { sed -n 's/^ *level 0 (tube.msh[^)]*): .* \([0-9]*\) matrices\(;.*\)\{0,1\}$/\1/p' "$TMP/$1.log"; }
run tube_fresh "${TUBE[@]}" -multilevel_coarse_reuse 0 -threads 1
[ -n "$(matrices tube)" ] && [ "$(matrices tube)" -le "$(cycles tube)" ] && [ "$(matrices tube_fresh)" -gt "$(cycles tube_fresh)" ] && ok ||
  fail "tube: $(matrices tube) coarse matrices in $(cycles tube) cycles (kept), $(matrices tube_fresh) in $(cycles tube_fresh) (-multilevel_coarse_reuse 0)"
check tube_fresh --max-relative-residual 1e-3
# the one-element-thick wall coarsened twice (1,035 / 202 / 49 nodes), to Newton's tolerance
run wall3 "${TUBE[@]}" -multilevel 3 -rtol 1e-6 -iters 300
[ "$(grep -c '^level [012] (tube.msh' "$TMP/wall3.log")" = 3 ] && ok || fail "wall3: not 3 levels: $(grep '^level' "$TMP/wall3.log")"
check wall3 --max-relative-residual 1e-6
# more levels than the wall's collapses make: the 3 meshes, 3 levels below by aggregation (not refused), the same
# equilibrium (both to 1e-6: measured 2.3e-7 apart)
run wall6 "${TUBE[@]}" -multilevel 6 -rtol 1e-6 -iters 300
grep -q "^below level 0: 3 levels by aggregation" "$TMP/wall6.log" && [ "$(grep -c '^level [012] (tube.msh' "$TMP/wall6.log")" = 3 ] && ok ||
  fail "wall6: $(grep '^level\|^below' "$TMP/wall6.log")"
check wall6 --max-relative-residual 1e-6 --compare "$TMP/wall3.h5" --rtol 1e-5
# TetGen (81 nodes: one coarse level)
defaulted tetgen "multilevel PBNG, 2 levels" -mesh "$PBNG_TEST_DATA/cube.node" -fix_box 0,0,0,0,1,1 -gravity 0,0,-9.8 -youngs 1e4 -frames 1

# P2 tetrahedra (TetGen -o2): the first coarse level is the linear tetrahedra of the same cells on the corner nodes
defaulted tet10file "multilevel PBNG, 2 levels" -mesh "$PBNG_TEST_DATA/tet10_box.node" -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
grep -q "^level 0 (.*tet10_box.node coarsened 1 time): 36 nodes, 78 tetrahedra" tet10file.log && ok || fail "tet10file: not the corner mesh: $(grep '^level' tet10file.log)"

# other volume kinds: a hex8 file and a file mixing hex8, prism6 and pyramid5 -> their tetrahedra (a node at each
# cell's centroid) coarsened; a hex27 file -> its hex8 corner mesh first (p-multigrid)
defaulted hexfile "multilevel PBNG, 2 levels" -mesh "$PBNG_TEST_DATA/hex8_v41_ascii.msh" -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
grep -q "^level 0 (.*hex8_v41_ascii.msh coarsened 1 time): 13 nodes, 15 tetrahedra" hexfile.log && ok || fail "hexfile: $(grep '^level' hexfile.log)"
defaulted mixedfile "multilevel PBNG, 2 levels" -mesh "$PBNG_TEST_DATA/mixed_box_v41_ascii.msh" -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
defaulted hex27file "multilevel PBNG, 2 levels" -mesh "$PBNG_TEST_DATA/hex27_v41_ascii.msh" -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
grep -q "^level 0 (.*hex27_v41_ascii.msh coarsened 1 time): 45 nodes, 16 hex8" hex27file.log && ok || fail "hex27file: $(grep '^level' hex27file.log)"

# --- generated meshes: every kind and material -------------------------------------------------------------------
defaulted box "multilevel PBNG, 2 levels, plain PBNG smoother" -scene box -res 8 -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
defaulted tet10 "multilevel PBNG, 3 levels" -scene box_stretch_twist -res 5 -element tet10 -frames 1
defaulted hex8 "multilevel PBNG, 2 levels" -scene box_stretch_twist -res 6 -element hex8 -frames 1
defaulted stvk "multilevel PBNG, 2 levels, plain PBNG smoother" -scene box_stretch_twist -res 8 -material stvk -frames 1
defaulted weak "multilevel PBNG, 2 levels" -scene box -res 5 -weak "$PBNG_TEST_DATA/box4_weak.txt" -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1e4 -frames 1
defaulted released "multilevel PBNG, 2 levels, plain PBNG smoother" -scene box -res 6 -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1 \
  -bc0_velocity 0.5,0,0 -bc0_release 0.05 -frames 2
defaulted plastic "multilevel PBNG" -scene box_stretch_twist -res 6 -material stvk -plasticity -plastic_yield 0.02 -frames 2
# -multilevel auto with another solver option: the levels are still chosen (the smoother is the one given)
defaulted auto_accel "multilevel PBNG, 2 levels, sor smoother" -scene box_stretch_twist -res 8 -frames 1 -multilevel auto -accel sor

# --- where multilevel PBNG does not run the problem: single-level, and why ----------------------------------------
# a point load (it acts on the finest level; FAS's tau correction carries it to the coarse ones): Newton's equilibrium
L=(-scene box -res 5 -fix_box 0,0,0,0,1,1 -load_box 1,0,0,1,1,1 -load_force 0,-20,0 -youngs 1e4 -frames 1 -threads 1)
run load_newton "${L[@]}" -solver newton -rtol 1e-10 -iters 100
run load "${L[@]}" -rtol 1e-8 -iters 300
grep -q "^defaults: multilevel PBNG, 2 levels, plain PBNG smoother" "$TMP/load.log" && ok || fail "load: $(grep '^defaults' "$TMP/load.log")"
check load --max-relative-residual 1e-8 --compare "$TMP/load_newton.h5" --rtol 4e-11  # measured 1.3e-11
run sheetfile -mesh "$PBNG_TEST_DATA/sheet_block_v41_ascii.msh" -fix_group fixed -gravity 0,0,-9.8 -youngs 1e4 -frames 1 -iters 5
check sheetfile --max-relative-residual 1  # 5 sweeps lower the residual
grep -q "^defaults: single-level PBNG, not multilevel: coarse levels are made automatically from volume elements only: give this mesh's coarser levels with -mesh_levels" \
  "$TMP/sheetfile.log" && ok || fail "sheetfile: $(grep '^defaults' "$TMP/sheetfile.log")"
expect_error "-multilevel neither auto nor a number" "-multilevel two: must be auto or a number of levels 1..10" \
  "$PBNG" -scene box -res 4 -multilevel two -output "$TMP/bad.h5"
finish
