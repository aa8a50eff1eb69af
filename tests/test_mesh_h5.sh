#!/usr/bin/env bash
# HDF5 mesh input (-mesh FILE.h5, docs/output.md#hdf5-mesh-input): pbng-convert streams a Gmsh 4.1 file into one that pbng
# reads as the same mesh; a pbng result is re-run as a mesh; with -partitioner ptscotch every process reads its slice
# (pbng-partition on 1, 2, 3 processes: consistent files with METIS's colors; pbng on the files and on the fly: the
# METIS run's positions bitwise, single-level and multilevel with -mesh_levels, and an all-negative file re-oriented
# alike); damaged files and bad elements (repeated elements across slices too): the same clear error in the serial and
# parallel paths, no output.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"
CONVERT="$PBNG_BIN/pbng-convert"
MSH="$PBNG_TEST_DATA/cube_fine_v41.msh"
partition_on() { # N NAME ARGS...: pbng-partition -partitioner ptscotch on N processes writing $TMP/NAME.h5
  local n=$1 name=$2; shift 2
  mpi "$n" "$PART" -partitioner ptscotch -pbd_colors "$@" -output "$TMP/$name.h5" > "$TMP/$name.log" 2>&1 && ok || { fail "ptscotch $name on $n"; cat "$TMP/$name.log"; }
}

# pbng-convert: the Gmsh cube as an HDF5 mesh (its groups as /sets), read by pbng as the same mesh (bitwise runs)
"$CONVERT" "$MSH" "$TMP/cube.h5" > "$TMP/convert.log" 2>&1 && grep -q "240 nodes, 745 tetrahedra, 3 node sets" "$TMP/convert.log" && ok ||
  { fail "pbng-convert"; cat "$TMP/convert.log"; }
"$CONVERT" --no-sets "$MSH" "$TMP/cube_nosets.h5" > "$TMP/log" 2>&1 && ok || { fail "pbng-convert --no-sets"; cat "$TMP/log"; }
g=(-gravity 0,-9.8,0 -youngs 1e4 -frames 1 -iters 40 -multilevel 1 -rtol 0)
pbng_on 1 "${g[@]}" -fix_group left -mesh "$MSH" -output "$TMP/gmsh.h5" > "$TMP/log" 2>&1 && ok || { fail "Gmsh cube"; cat "$TMP/log"; }
pbng_on 1 "${g[@]}" -fix_group left -mesh "$TMP/cube.h5" -output "$TMP/gmsh_h5.h5" > "$TMP/log" 2>&1 && ok || { fail "converted cube"; cat "$TMP/log"; }
same "$TMP/gmsh.h5" "$TMP/gmsh_h5.h5" "the converted cube (-fix_group left from /sets/left)"
pbng_on 2 "${g[@]}" -fix_box 0,0,0,0.01,1,1 -mesh "$MSH" -output "$TMP/gbox.h5" > "$TMP/log" 2>&1 && ok || { fail "Gmsh cube, box set"; cat "$TMP/log"; }
pbng_on 3 "${g[@]}" -fix_box 0,0,0,0.01,1,1 -mesh "$TMP/cube_nosets.h5" -partitioner ptscotch -output "$TMP/gbox_pt.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "converted cube, ptscotch"; cat "$TMP/log"; }
same "$TMP/gbox.h5" "$TMP/gbox_pt.h5" "the converted cube read in slices"
pbng_on 2 "${g[@]}" -fix_group left -mesh "$TMP/cube.h5" -partitioner ptscotch -output "$TMP/gmsh_pt.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "converted cube with sets, ptscotch"; cat "$TMP/log"; }
same "$TMP/gmsh.h5" "$TMP/gmsh_pt.h5" "the converted cube's sets read in slices (more: test_mesh_h5_sets)"

# a pbng result (Res-8 box) and its coarser levels as meshes; METIS runs to compare with
for r in 8 5 3; do "$PBNG" -scene box -res $r -frames 0 -output "$TMP/b$r.h5" > "$TMP/log" 2>&1 && ok || { fail "Res-$r result"; cat "$TMP/log"; }; done
S=(-scene box_stretch_twist -frames 2 -multilevel 1 -rtol 0 -iters 30 -accel chebyshev)
"$PART" -mesh "$TMP/b8.h5" -parts 3 -output "$TMP/metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition of the result"; cat "$TMP/log"; }
pbng_on 2 "${S[@]}" -mesh "$TMP/b8.h5" -output "$TMP/fly.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS on the fly"; cat "$TMP/log"; }
pbng_on 1 "${S[@]}" -res 8 -output "$TMP/generated.h5" > "$TMP/log" 2>&1 && ok || { fail "the generated box"; cat "$TMP/log"; }
same "$TMP/fly.h5" "$TMP/generated.h5" "the result re-run as a mesh against the generated box"

# pbng-partition -partitioner ptscotch on 1, 2, 3 processes: consistent files, METIS's colors, runs equal to METIS's
for n in 1 2 3; do
  partition_on "$n" "pt$n" -mesh "$TMP/b8.h5" -parts 3
  [ "$(grep -c '^process [0-9]*: read .* peak memory' "$TMP/pt$n.log")" = "$n" ] && ok || { fail "the report of $n processes"; cat "$TMP/pt$n.log"; }
  "$PY" "$HERE/check_partition_file.py" "$TMP/pt$n.h5" --colors "$TMP/metis.h5" && ok || fail "the file of $n processes"
  pbng_on 3 "${S[@]}" -mesh "$TMP/pt$n.h5" -output "$TMP/file$n.h5" > "$TMP/log" 2>&1 && ok || { fail "run from pt$n.h5"; cat "$TMP/log"; }
  same "$TMP/fly.h5" "$TMP/file$n.h5" "pbng on the file of $n processes"
done
# on the fly on 3 ranks
for n in 3; do
  pbng_on "$n" "${S[@]}" -mesh "$TMP/b8.h5" -partitioner ptscotch -output "$TMP/ptfly$n.h5" > "$TMP/ptfly$n.log" 2>&1 && ok ||
    { fail "ptscotch on the fly, $n ranks"; cat "$TMP/ptfly$n.log"; }
  same "$TMP/fly.h5" "$TMP/ptfly$n.h5" "-partitioner ptscotch on the fly, $n ranks"
done
grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks, $TMP/b8.h5: read" "$TMP/ptfly3.log" && ok || fail "the on-the-fly report line"
# every tetrahedron listed the other way round: re-oriented in slices as on rank 0 (the same positions)
"$PY" - "$TMP/b8.h5" "$TMP/negative.h5" <<'PYEOF' && ok || fail "writing the negative file"
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    t = f["/mesh/tetrahedra"][:]
    f["/mesh/tetrahedra"][:] = t[:, [0, 1, 3, 2]]
PYEOF
pbng_on 3 "${S[@]}" -mesh "$TMP/negative.h5" -partitioner ptscotch -output "$TMP/negative_pt.h5" > "$TMP/log" 2>&1 && ok || { fail "negative file"; cat "$TMP/log"; }
same "$TMP/fly.h5" "$TMP/negative_pt.h5" "the all-negative file read in slices"

# multilevel: coarse levels as -mesh_levels files (HDF5 meshes, read in slices too); without them the default is single-level
M=(-scene box_stretch_twist -frames 2 -multilevel 3 -mesh "$TMP/b8.h5" -mesh_levels "$TMP/b5.h5,$TMP/b3.h5")
pbng_on 2 "${M[@]}" -output "$TMP/mlfly.h5" > "$TMP/log" 2>&1 && ok || { fail "multilevel METIS"; cat "$TMP/log"; }
pbng_on 3 "${M[@]}" -partitioner ptscotch -output "$TMP/mlpt.h5" > "$TMP/mlpt.log" 2>&1 && ok || { fail "multilevel ptscotch"; cat "$TMP/mlpt.log"; }
[ "$(grep -c '^partitioner: PT-Scotch, .*: read' "$TMP/mlpt.log")" = 3 ] && ok || fail "every level read in slices"
same "$TMP/mlfly.h5" "$TMP/mlpt.h5" "multilevel -partitioner ptscotch with -mesh_levels"
pbng_on 2 -scene box_stretch_twist -frames 1 -mesh "$TMP/b8.h5" -partitioner ptscotch -dry_run > "$TMP/log" 2>&1 &&
  grep -q "^defaults: single-level PBNG, not multilevel: -partitioner ptscotch does not coarsen a mesh file" "$TMP/log" && ok ||
  { fail "the default with ptscotch and a mesh file"; cat "$TMP/log"; }
expect_error "multilevel without coarse files" "-multilevel 3 with -mesh $TMP/b8.h5: its coarse levels are coarsened from the whole mesh on one process" \
  pbng_on 2 -scene box_stretch_twist -frames 1 -multilevel 3 -mesh "$TMP/b8.h5" -partitioner ptscotch -output "$TMP/x.h5"
expect_error "pbng-partition multilevel from a mesh file" "its coarse levels are coarsened from the whole mesh" \
  mpi 2 "$PART" -partitioner ptscotch -mesh "$TMP/b8.h5" -multilevel 2 -parts 2 -output "$TMP/x.h5"

# one other volume kind (/mesh/elements, root attribute element = hex8): read in slices too, an inverted hexahedron refused alike
"$PBNG" -scene box -res 6 -element hex8 -frames 0 -output "$TMP/hex.h5" > "$TMP/log" 2>&1 && ok || { fail "hex8 result"; cat "$TMP/log"; }
pbng_on 2 "${S[@]}" -mesh "$TMP/hex.h5" -output "$TMP/hexfly.h5" > "$TMP/log" 2>&1 && ok || { fail "hex8 METIS"; cat "$TMP/log"; }
pbng_on 3 "${S[@]}" -mesh "$TMP/hex.h5" -partitioner ptscotch -output "$TMP/hexpt.h5" > "$TMP/log" 2>&1 && ok || { fail "hex8 ptscotch"; cat "$TMP/log"; }
same "$TMP/hexfly.h5" "$TMP/hexpt.h5" "hex8 read in slices"
"$PY" - "$TMP/hex.h5" "$TMP/hexinv.h5" <<'PYEOF' && ok || fail "writing the inverted hexahedron"
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    f["/mesh/elements"][100] = f["/mesh/elements"][100][[4, 5, 6, 7, 0, 1, 2, 3]]
PYEOF
expect_error "inverted hexahedron in slices" "hexinv.h5: element 100 (record 100, hex8) is inverted in the rest state at quadrature point 0" \
  mpi 2 "$PART" -partitioner ptscotch -mesh "$TMP/hexinv.h5" -parts 2 -output "$TMP/x.h5"
expect_error "inverted hexahedron, METIS" "hexinv.h5: element 100 (record 100, hex8) is inverted in the rest state at quadrature point 0" \
  "$PART" -mesh "$TMP/hexinv.h5" -parts 2 -output "$TMP/x.h5"

# damaged files and bad elements (the bad record in the second process's slice: its message reaches process 0)
"$PY" - "$TMP/b8.h5" "$TMP" <<'PYEOF' && ok || fail "writing the bad files"
import h5py, numpy as np, shutil, sys
src, d = sys.argv[1], sys.argv[2]
def bad(name, edit):
    shutil.copy(src, f"{d}/{name}.h5")
    with h5py.File(f"{d}/{name}.h5", "r+") as f:
        edit(f)
bad("index", lambda f: f["/mesh/tetrahedra"].__setitem__((1500, 2), 1000000))
bad("inverted", lambda f: f["/mesh/tetrahedra"].__setitem__(1500, f["/mesh/tetrahedra"][1500][[0, 1, 3, 2]]))
bad("degenerate", lambda f: f["/mesh/tetrahedra"].__setitem__((1500, 3), f["/mesh/tetrahedra"][1500, 2]))
bad("nan", lambda f: f["/mesh/rest_positions"].__setitem__((400, 1), np.nan))
def flat(f):
    X = f["/mesh/rest_positions"][:, :2]
    del f["/mesh/rest_positions"]
    f["/mesh/rest_positions"] = X
bad("shape", flat)
def repeat(f, pairs):  # element dst made element src again, its corners rotated (the same orientation)
    for dst, src in pairs:
        f["/mesh/tetrahedra"][dst] = f["/mesh/tetrahedra"][src][[1, 2, 0, 3]]
# two repeated pairs, each across slices: the one at the lower smallest node is the serial check's first (not the pair
# holding the lowest element, 100)
bad("repeated", lambda f: repeat(f, ((100, 1600), (1650, 200))))
PYEOF
head -c 3000 "$TMP/b8.h5" > "$TMP/truncated.h5"
for bad in "index:element 1500 (record 1500) references node 1000000, outside 0..511" \
           "inverted:is inverted in the rest state: 1 of the 1715 tetrahedra" \
           "degenerate:element 1500 (record 1500, 0-based nodes" "nan:node 400 has a non-finite coordinate" \
           "shape:/mesh/rest_positions is not a floating-point [N, 3] dataset" "truncated:an HDF5 file that HDF5 cannot open (truncated or damaged?)" \
           "repeated:repeated.h5: elements 200 and 1650 (records 200 and 1650) are duplicates: two tet4 on the same nodes"; do
  f="$TMP/${bad%%:*}.h5" msg="${bad#*:}"
  expect_error "METIS partition of ${bad%%:*}" "$msg" "$PART" -mesh "$f" -parts 2 -output "$TMP/x.h5"
  expect_error "ptscotch partition of ${bad%%:*}" "$msg" mpi 2 "$PART" -partitioner ptscotch -mesh "$f" -parts 2 -output "$TMP/x.h5"
done
expect_error "pbng, METIS, bad index" "index.h5: element 1500 (record 1500) references node 1000000" pbng_on 2 "${S[@]}" -mesh "$TMP/index.h5" -output "$TMP/x.h5"
expect_error "pbng, ptscotch, inverted" "inverted.h5: element 1500 (record 1500, 0-based nodes" \
  pbng_on 2 "${S[@]}" -mesh "$TMP/inverted.h5" -partitioner ptscotch -output "$TMP/x.h5"
expect_error "pbng, ptscotch, truncated" "truncated.h5: an HDF5 file that HDF5 cannot open" \
  pbng_on 2 "${S[@]}" -mesh "$TMP/truncated.h5" -partitioner ptscotch -output "$TMP/x.h5"
expect_error "pbng, ptscotch, repeated elements on 3 ranks" "repeated.h5: elements 200 and 1650 (records 200 and 1650) are duplicates" \
  pbng_on 3 "${S[@]}" -mesh "$TMP/repeated.h5" -partitioner ptscotch -output "$TMP/x.h5"
# a repeated tet10 (rows of 10 nodes, the same order) across the slices of 3 processes, as the serial check finds it
"$PBNG" -scene box -res 4 -element tet10 -frames 0 -output "$TMP/t10.h5" > "$TMP/log" 2>&1 && ok || { fail "tet10 result"; cat "$TMP/log"; }
"$PY" - "$TMP/t10.h5" "$TMP/t10rep.h5" <<'PYEOF' && ok || fail "writing the repeated tet10"
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    f["/mesh/elements"][130] = f["/mesh/elements"][3]
PYEOF
for n in 1 3; do
  expect_error "repeated tet10 on $n processes" "t10rep.h5: elements 3 and 130 (records 3 and 130) are duplicates: two tet10 on the same nodes" \
    mpi "$n" "$PART" -partitioner ptscotch -mesh "$TMP/t10rep.h5" -parts 3 -output "$TMP/x.h5"
done
expect_error "repeated tet10, METIS" "t10rep.h5: elements 3 and 130 (records 3 and 130) are duplicates: two tet10 on the same nodes" \
  "$PART" -mesh "$TMP/t10rep.h5" -parts 3 -output "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] && [ ! -e "$TMP/x.h5.partial" ] && ok || fail "a failed run left x.h5 behind"

# pbng-convert's own errors: MSH 2.2 (pbng reads it itself), an element on an undefined node tag; no output left
expect_error "convert MSH 2.2" "pbng-convert streams MSH 4.1 ASCII" "$CONVERT" "$PBNG_TEST_DATA/cube_v22_ascii.msh" "$TMP/y.h5"
"$PY" - "$PBNG_TEST_DATA/tet4_v41_ascii.msh" "$TMP/undefined.msh" <<'PYEOF' && ok || fail "writing undefined.msh"
import sys
lines = open(sys.argv[1]).read().split("\n")
at = lines.index("$Elements") + 3  # the first element of the first block: its first node tag made undefined
tag, first, *rest = lines[at].split()
lines[at] = " ".join([tag, "99999", *rest])
open(sys.argv[2], "w").write("\n".join(lines))
PYEOF
expect_error "convert an undefined node tag" "an element uses a node tag that no \$Nodes line defines" "$CONVERT" "$TMP/undefined.msh" "$TMP/y.h5"
[ ! -e "$TMP/y.h5" ] && [ ! -e "$TMP/y.h5.partial" ] && ok || fail "a failed conversion left y.h5 behind"
finish
