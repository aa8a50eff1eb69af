#!/usr/bin/env bash
# Parallel partitioning with PT-Scotch (-partitioner ptscotch, docs/scaling.md#35-partitioning-in-parallel): the unit test
# on 2 and 3 processes (pieces bitwise the serial path's); pbng-partition on 1, 2 and 3 processes writes files that
# tests/check_partition_file.py finds consistent (every node owned once, ghosts' owners own them, elements covered,
# node and PBD/XPBD element colors those of the METIS file), the same file twice; pbng on those files and pbng
# -partitioner ptscotch on the fly give the METIS run's positions bitwise, single-level, multilevel and with -solver
# xpbd_qs (the element colors); tet10 and tet20 grids alike; unsupported input is a clear error, no file.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"

unit_on_ranks test_ptscotch "2 3"

# the METIS file (its colors: pbng_color_nodes's) and the METIS runs to compare with
"$PART" -scene box_stretch_twist -res 10 -parts 3 -output "$TMP/metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition"; cat "$TMP/log"; }
S=(-scene box_stretch_twist -frames 2 -multilevel 1 -rtol 0 -iters 30 -accel chebyshev) # (-res 10 on the fly: a file fixes it)
pbng_on 2 "${S[@]}" -res 10 -output "$TMP/fly.h5" > "$TMP/fly.log" 2>&1 && ok || { fail "METIS on the fly"; cat "$TMP/fly.log"; }

# pbng-partition on 1, 2, 3 processes, 3 parts each time: consistent files, METIS's colors, runs equal to METIS's
for n in 1 2 3; do
  mpi "$n" "$PART" -partitioner ptscotch -pbd_colors -scene box_stretch_twist -res 10 -parts 3 -output "$TMP/pt$n.h5" > "$TMP/part$n.log" 2>&1 && ok ||
    { fail "ptscotch partition on $n processes"; cat "$TMP/part$n.log"; }
  [ "$(grep -c '^process [0-9]*: generate .* peak memory' "$TMP/part$n.log")" = "$n" ] && grep -q "^parts: 3, owned nodes" "$TMP/part$n.log" &&
    grep -q "MiB per process at most" "$TMP/part$n.log" && ok || { fail "the report of $n processes"; cat "$TMP/part$n.log"; }
  "$PY" "$HERE/check_partition_file.py" "$TMP/pt$n.h5" --colors "$TMP/metis.h5" && ok || fail "the file of $n processes"
  pbng_on 3 "${S[@]}" -mesh "$TMP/pt$n.h5" -output "$TMP/file$n.h5" > "$TMP/file$n.log" 2>&1 && ok || { fail "run from pt$n.h5"; cat "$TMP/file$n.log"; }
  same "$TMP/fly.h5" "$TMP/file$n.h5" "pbng on the file of $n processes"
done
# deterministic: the same partition again (2 processes)
mpi 2 "$PART" -partitioner ptscotch -pbd_colors -scene box_stretch_twist -res 10 -parts 3 -output "$TMP/again.h5" > "$TMP/log" 2>&1 && ok || fail "partition again"
"$PY" - "$TMP/pt2.h5" "$TMP/again.h5" <<'PYEOF' && ok || fail "a second partition on 2 processes differs"
import h5py, numpy as np, sys
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
sys.exit(0 if all(np.array_equal(a[k][:], b[k][:]) for k in ("/nodes/global", "/nodes/owner", "/nodes/X", "/elements/nodes", "/elements/global")) else 1)
PYEOF
# the checker fails on a damaged file: a ghost given another owner, a node owned twice
"$PY" - "$TMP/pt2.h5" "$TMP" <<'PYEOF' && ok || fail "writing the damaged files"
import h5py, shutil, sys
for name, edit in (("ghost_owner", lambda f: f["/nodes/owner"].__setitem__((f["/parts/nowned"][0, 0], 0), 2 if f["/nodes/owner"][f["/parts/nowned"][0, 0], 0] != 2 else 1)),
                   ("color", lambda f: f["/nodes/color"].__setitem__((0, 0), f["/nodes/color"][1, 0]))):
    shutil.copy(sys.argv[1], f"{sys.argv[2]}/{name}.h5")
    with h5py.File(f"{sys.argv[2]}/{name}.h5", "r+") as f:
        edit(f)
PYEOF
for bad in ghost_owner color; do
  "$PY" "$HERE/check_partition_file.py" "$TMP/$bad.h5" --colors "$TMP/metis.h5" > /dev/null && fail "the checker passed the damaged $bad.h5" || ok
done

# on the fly: -partitioner ptscotch on 1 and 3 ranks, single-level and multilevel (coarse levels partitioned alike)
for n in 1 3; do
  pbng_on "$n" "${S[@]}" -res 10 -partitioner ptscotch -output "$TMP/ptfly$n.h5" > "$TMP/ptfly$n.log" 2>&1 && ok || { fail "ptscotch on the fly, $n ranks"; cat "$TMP/ptfly$n.log"; }
  same "$TMP/fly.h5" "$TMP/ptfly$n.h5" "-partitioner ptscotch on the fly, $n ranks"
done
grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks, Res-10 box" "$TMP/ptfly3.log" && ok || fail "the on-the-fly report line"
M=(-scene box_stretch_twist -frames 2 -multilevel 3)
pbng_on 2 "${M[@]}" -res 10 -output "$TMP/mlfly.h5" > "$TMP/log" 2>&1 && ok || { fail "multilevel METIS"; cat "$TMP/log"; }
pbng_on 3 "${M[@]}" -res 10 -partitioner ptscotch -output "$TMP/mlpt.h5" > "$TMP/mlpt.log" 2>&1 && ok || { fail "multilevel ptscotch"; cat "$TMP/mlpt.log"; }
[ "$(grep -c '^partitioner: PT-Scotch' "$TMP/mlpt.log")" = 3 ] && ok || fail "every level partitioned by PT-Scotch"
# coarse levels on fewer ranks with PT-Scotch too (-multilevel_min_nodes_per_rank 200: the Res-5 and Res-3 levels on one of 3)
[ "$(grep -c '^level [01] (generated Res-[53] box): .*(on 1 of 3 ranks)$' "$TMP/mlpt.log")" = 2 ] && grep -q '^partitioner: PT-Scotch, 1 parts on 3 ranks, Res-5 box' "$TMP/mlpt.log" &&
  ok || fail "ptscotch: the coarse levels not on one rank ($(grep '^level' "$TMP/mlpt.log"))"
same "$TMP/mlfly.h5" "$TMP/mlpt.h5" "multilevel -partitioner ptscotch on the fly"
# pbng-partition -multilevel 3 with ptscotch: the levels' files, run as -mesh_levels
mpi 2 "$PART" -partitioner ptscotch -scene box_stretch_twist -res 10 -parts 2 -multilevel 3 -output "$TMP/ml.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "ptscotch -multilevel 3"; cat "$TMP/log"; }
pbng_on 2 "${M[@]}" -mesh "$TMP/ml.h5" -mesh_levels "$TMP/ml.level1.h5,$TMP/ml.level2.h5" -output "$TMP/mlfile.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "multilevel from the ptscotch files"; cat "$TMP/log"; }
same "$TMP/mlfly.h5" "$TMP/mlfile.h5" "multilevel from the ptscotch files"

# the PBD/XPBD constraint colors (pbng_color_elements's, computed in parallel): -solver xpbd_qs with PT-Scotch on the fly
# and from a PT-Scotch file gives the METIS run's positions bitwise
X=(-scene box_stretch_twist -frames 2 -solver xpbd_qs -iters 20 -rtol 0)
pbng_on 3 "${X[@]}" -res 10 -output "$TMP/xmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "xpbd_qs with METIS"; cat "$TMP/log"; }
pbng_on 3 "${X[@]}" -res 10 -partitioner ptscotch -output "$TMP/xfly.h5" > "$TMP/xfly.log" 2>&1 && ok || { fail "xpbd_qs with ptscotch on the fly"; cat "$TMP/xfly.log"; }
grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks, Res-10 box" "$TMP/xfly.log" && grep -q "constraint colors (.* element + 0 weak), xpbd_qs" "$TMP/xfly.log" &&
  ok || fail "xpbd_qs on the fly: not PT-Scotch's parts or no constraint colors"
same "$TMP/xmetis.h5" "$TMP/xfly.h5" "xpbd_qs with -partitioner ptscotch on the fly"
pbng_on 3 "${X[@]}" -mesh "$TMP/pt2.h5" -output "$TMP/xfile.h5" > "$TMP/log" 2>&1 && ok || { fail "xpbd_qs from a ptscotch file"; cat "$TMP/log"; }
same "$TMP/xmetis.h5" "$TMP/xfile.h5" "xpbd_qs from the ptscotch file of 2 processes"
# without -pbd_colors a PT-Scotch file has none (their element graph is not built): PBD/XPBD say how to get them
mpi 2 "$PART" -partitioner ptscotch -scene box_stretch_twist -res 10 -parts 3 -output "$TMP/nocolors.h5" > "$TMP/log" 2>&1 && ok || fail "partition without -pbd_colors"
"$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1]); assert "nelem_colors" not in f.attrs and f["/elements/color"].shape[0] == 0, dict(f.attrs)' "$TMP/nocolors.h5" &&
  ok || fail "a file without -pbd_colors has element colors"
"$PY" "$HERE/check_partition_file.py" "$TMP/nocolors.h5" && ok || fail "the file without element colors"
expect_error "PBD on a PT-Scotch file without -pbd_colors" "-partitioner ptscotch -pbd_colors for PT-Scotch" pbng_on 3 "${X[@]}" -mesh "$TMP/nocolors.h5" -output "$TMP/bad.h5"

# tet10 and tet20 grids in slices (their unused grid points numbered in closed form): on the fly single-level (tet20 six
# per cell, the bar), -multilevel auto (a tet10 level over tet4 levels, each partitioned by PT-Scotch) and xpbd_ho (the
# element colors of 10-node rows), and a pbng-partition file run as the METIS run, all bitwise
H=(-frames 2 -rtol 0 -iters 20)
for c in "box_stretch_twist -res 5 -element tet10 -multilevel auto" "box_stretch_twist -res 4 -element tet20 -tet_split six -multilevel 1" \
  "bar_gravity -res 4 -element tet10 -multilevel 1" "box_stretch_twist -res 4 -element tet10 -solver xpbd_ho -iters 8"; do
  read -r -a C <<<"-scene $c"
  pbng_on 2 "${C[@]}" "${H[@]}" -output "$TMP/hom.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS: $c"; cat "$TMP/log"; }
  pbng_on 3 "${C[@]}" "${H[@]}" -partitioner ptscotch -output "$TMP/hop.h5" > "$TMP/hop.log" 2>&1 && ok || { fail "ptscotch: $c"; cat "$TMP/hop.log"; }
  grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks" "$TMP/hop.log" && ok || fail "$c: not partitioned by PT-Scotch"
  same "$TMP/hom.h5" "$TMP/hop.h5" "-partitioner ptscotch on the fly: $c"
done
P=(-scene box_stretch_twist -res 5 -element tet10)
mpi 2 "$PART" -partitioner ptscotch -pbd_colors "${P[@]}" -parts 3 -output "$TMP/t10pt.h5" > "$TMP/log" 2>&1 && ok || { fail "ptscotch partition of tet10"; cat "$TMP/log"; }
"$PART" "${P[@]}" -parts 3 -output "$TMP/t10metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition of tet10"; cat "$TMP/log"; }
"$PY" "$HERE/check_partition_file.py" "$TMP/t10pt.h5" --colors "$TMP/t10metis.h5" && ok || fail "the tet10 file of 2 processes"
pbng_on 2 "${P[@]}" "${H[@]}" -multilevel 1 -output "$TMP/t10fly.h5" > "$TMP/log" 2>&1 && ok || { fail "tet10 METIS on the fly"; cat "$TMP/log"; }
pbng_on 3 "${H[@]}" -scene box_stretch_twist -multilevel 1 -mesh "$TMP/t10pt.h5" -output "$TMP/t10file.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "run from the tet10 ptscotch file"; cat "$TMP/log"; }
same "$TMP/t10fly.h5" "$TMP/t10file.h5" "pbng on the tet10 file of pbng-partition -partitioner ptscotch"

# unsupported input: a clear error, non-zero exit, no file
o="$TMP/bad.h5"
expect_error "ptscotch on a Gmsh file" "cube_fine_v41.msh: missing or not an HDF5 file: mesh files are read in slices from HDF5 meshes" \
  mpi 2 "$PART" -partitioner ptscotch -mesh "$PBNG_TEST_DATA/cube_fine_v41.msh" -parts 2 -output "$o"
expect_error "ptscotch with -bind_snap" "it does not snap bound vertices (-bind_snap" \
  mpi 2 "$PART" -partitioner ptscotch -scene box -res 4 -bind_distance 0.1 -bind_snap -parts 2 -output "$o"
expect_error "ptscotch on sheets" "not sheets" mpi 2 "$PART" -partitioner ptscotch -scene cloth_stretch -res 4 -parts 2 -output "$o"
expect_error "more parts than nodes" "Res-2 box: 8 nodes cannot be split over 9 parts" mpi 2 "$PART" -partitioner ptscotch -scene box -res 2 -parts 9 -output "$o"
expect_error "METIS on 2 processes" "run it on one process (METIS is serial), or give -partitioner ptscotch" mpi 2 "$PART" -scene box -res 4 -parts 2 -output "$o"
expect_error "unknown partitioner" "known partitioners are metis (default) and ptscotch" "$PART" -partitioner kway -scene box -res 4 -output "$o"
expect_error "pbng ptscotch on a Gmsh file" "convert a Gmsh file with pbng-convert" \
  pbng_on 2 -partitioner ptscotch -mesh "$PBNG_TEST_DATA/cube_fine_v41.msh" -frames 1 -output "$o"
expect_error "pbng ptscotch with the objects" "not the objects of objects_dropping" pbng_on 2 -partitioner ptscotch -scene objects_dropping -frames 1 -output "$o"
expect_error "pbng ptscotch on a partitioned file" "its parts are the partition" pbng_on 3 -partitioner ptscotch -scene box_stretch_twist -mesh "$TMP/pt1.h5" -frames 1 -output "$o"
[ ! -e "$o" ] && [ ! -e "$o.partial" ] && ok || fail "a failed run left $o behind"
finish
