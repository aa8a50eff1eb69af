#!/usr/bin/env bash
# Weak constraints through the parallel partitioning (-partitioner ptscotch, docs/weak_constraints.md#in-parallel): the
# unit test on 1 and 4 processes (pieces, node colors, block and PBD/XPBD colors bitwise the serial cut's); -weak FILE,
# read in shares, with a generated box and with an HDF5 mesh file: pbng-partition on 1 and 3 processes writes files
# that tests/check_partition_file.py finds consistent with the METIS file's colors and constraints; pbng on those files
# and pbng -partitioner ptscotch on the fly give the METIS run's positions bitwise (PBNG with its weak-constraint blocks,
# and xpbd_qs with the constraints' PBD/XPBD colors); a bad file gives the METIS path's message, naming file and line,
# wherever the line lies; two_blocks_hanging's stacked blocks and bindings generated in slices (on the fly and in files,
# bitwise METIS's). The multilevel runs: test_ptscotch_weak_levels.sh; bindings: test_ptscotch_bindings.sh.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"

unit_on_ranks test_ptscotch "1 4"

W="$PBNG_TEST_DATA/box8_weak.txt" # a Res-8 box's: pairs, interpolated anisotropic ones, a chain across every slice
cp "$W" "$TMP/w.txt"
C=(-scene box -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1000 -frames 1 -iters 30 -rtol 0) # (-res 8 with -weak; a file fixes them)
B=("${C[@]}" -multilevel 1 -res 8 -weak "$TMP/w.txt")
pbng_on 2 "${B[@]}" -output "$TMP/fly.h5" > "$TMP/fly.log" 2>&1 && grep -q "39 weak constraints" "$TMP/fly.log" && ok || { fail "METIS on the fly"; cat "$TMP/fly.log"; }
for n in 1 3; do
  pbng_on "$n" "${B[@]}" -partitioner ptscotch -output "$TMP/ptfly$n.h5" > "$TMP/ptfly$n.log" 2>&1 && ok || { fail "ptscotch on the fly, $n ranks"; cat "$TMP/ptfly$n.log"; }
  same "$TMP/fly.h5" "$TMP/ptfly$n.h5" "-weak, -partitioner ptscotch on the fly, $n ranks"
done
grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks, Res-8 box" "$TMP/ptfly3.log" && grep -q "39 weak constraints" "$TMP/ptfly3.log" && ok ||
  fail "the on-the-fly run: not PT-Scotch's parts or not the constraints ($(grep -i weak "$TMP/ptfly3.log"))"
# pbng-partition on 1 and 3 processes (the METIS file's colors and constraints), with and without the PBD/XPBD colors
"$PART" -scene box -res 8 -weak "$TMP/w.txt" -parts 3 -output "$TMP/metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition"; cat "$TMP/log"; }
for n in 1 3; do
  mpi "$n" "$PART" -partitioner ptscotch -pbd_colors -scene box -res 8 -weak "$TMP/w.txt" -parts 3 -output "$TMP/pt$n.h5" > "$TMP/part$n.log" 2>&1 &&
    grep -q "39 weak constraints" "$TMP/part$n.log" && ok || { fail "ptscotch partition on $n processes"; cat "$TMP/part$n.log"; }
  "$PY" "$HERE/check_partition_file.py" "$TMP/pt$n.h5" --colors "$TMP/metis.h5" && ok || fail "the file of $n processes"
  pbng_on 3 "${C[@]}" -multilevel 1 -mesh "$TMP/pt$n.h5" -output "$TMP/file$n.h5" > "$TMP/log" 2>&1 && ok || { fail "run from pt$n.h5"; cat "$TMP/log"; }
  same "$TMP/fly.h5" "$TMP/file$n.h5" "pbng on the file of $n processes"
done
mpi 2 "$PART" -partitioner ptscotch -scene box -res 8 -weak "$TMP/w.txt" -parts 3 -output "$TMP/plain.h5" > "$TMP/log" 2>&1 && ok || fail "partition without -pbd_colors"
"$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1]); assert "nelem_colors" not in f.attrs and f.attrs["nweak"] == 39 and "nblock_colors" in f.attrs, dict(f.attrs)' \
  "$TMP/plain.h5" && "$PY" "$HERE/check_partition_file.py" "$TMP/plain.h5" && ok || fail "a file without -pbd_colors: block colors only"
pbng_on 3 "${C[@]}" -multilevel 1 -mesh "$TMP/plain.h5" -output "$TMP/plainrun.h5" > "$TMP/log" 2>&1 && ok || { fail "run from plain.h5"; cat "$TMP/log"; }
same "$TMP/fly.h5" "$TMP/plainrun.h5" "pbng on the file without the PBD/XPBD colors"
# the checker fails on a damaged file: a constraint given to a part that owns none of its nodes, another block color
"$PY" - "$TMP/pt3.h5" "$TMP" <<'PYEOF' && ok || fail "writing the damaged files"
import h5py, shutil, sys
def damage(name, edit):
    shutil.copy(sys.argv[1], f"{sys.argv[2]}/{name}.h5")
    with h5py.File(f"{sys.argv[2]}/{name}.h5", "r+") as f:
        edit(f)
damage("weak_global", lambda f: f["/weak/global"].__setitem__((0, 0), (f["/weak/global"][0, 0] + 1) % f.attrs["nweak"]))
damage("block_color", lambda f: f["/weak/block_color"].__setitem__((0, 0), (f["/weak/block_color"][0, 0] + 1) % f.attrs["nblock_colors"]))
PYEOF
for bad in weak_global block_color; do
  "$PY" "$HERE/check_partition_file.py" "$TMP/$bad.h5" --colors "$TMP/metis.h5" > /dev/null && fail "the checker passed the damaged $bad.h5" || ok
done

# the constraint solvers' colors of the weak constraints (pbng_color_weak_constraints's, in parallel): xpbd_qs bitwise
X=(-scene box -res 8 -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1000 -frames 1 -solver xpbd_qs -iters 20 -rtol 0 -weak "$TMP/w.txt")
pbng_on 2 "${X[@]}" -output "$TMP/xmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "xpbd_qs with METIS"; cat "$TMP/log"; }
pbng_on 3 "${X[@]}" -partitioner ptscotch -output "$TMP/xfly.h5" > "$TMP/log" 2>&1 && grep -q "element + [1-9][0-9]* weak), xpbd_qs" "$TMP/log" && ok ||
  { fail "xpbd_qs with ptscotch"; cat "$TMP/log"; }
same "$TMP/xmetis.h5" "$TMP/xfly.h5" "xpbd_qs with weak constraints, -partitioner ptscotch"

# an HDF5 mesh file read in slices with -weak
"$PBNG" -scene box -res 8 -frames 0 -output "$TMP/b8.h5" > "$TMP/log" 2>&1 && ok || { fail "the Res-8 result"; cat "$TMP/log"; }
H=(-scene box_stretch_twist -frames 1 -multilevel 1 -rtol 0 -iters 30 -mesh "$TMP/b8.h5" -weak "$TMP/w.txt")
pbng_on 2 "${H[@]}" -output "$TMP/hmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "mesh file with -weak, METIS"; cat "$TMP/log"; }
pbng_on 3 "${H[@]}" -partitioner ptscotch -output "$TMP/hfly.h5" > "$TMP/log" 2>&1 && grep -q "^partitioner: PT-Scotch, .*: read" "$TMP/log" && ok ||
  { fail "mesh file with -weak, ptscotch"; cat "$TMP/log"; }
same "$TMP/hmetis.h5" "$TMP/hfly.h5" "a mesh file and -weak read in slices"

# a bad file: the serial reader's message, naming the line, from whichever process's share holds it; nothing written
o="$TMP/bad.h5"
bad() { # NAME LINE_EDIT EXPECTED: w.txt with an edit (python on the list of lines), run with METIS and in slices
  "$PY" -c 'import sys; L = open(sys.argv[1]).read().split("\n"); exec(sys.argv[3]); open(sys.argv[2], "w").write("\n".join(L))' "$TMP/w.txt" "$TMP/$1.txt" "$2"
  expect_error "METIS, $1" "$3" pbng_on 2 "${B[@]}" -weak "$TMP/$1.txt" -output "$o"
  expect_error "ptscotch, $1" "$3" pbng_on 3 "${B[@]}" -weak "$TMP/$1.txt" -partitioner ptscotch -output "$o"
  expect_error "ptscotch partition, $1" "$3" mpi 4 "$PART" -partitioner ptscotch -scene box -res 8 -weak "$TMP/$1.txt" -parts 2 -output "$o"
}
bad late_node 'L[40] = "1 3 1   1 512 1   1 1"' "late_node.txt:41: node 512 is not an index of the mesh's 512 nodes (0-based)"
bad two_bad 'L[10] = "1 3 1   1 2 0.5   1 1"; L[42] = "1 3 1"' "two_bad.txt:11: weak constraint: the weights of a side must sum to one"
bad no_header 'L[4] = "# no header"' "no_header.txt: not a weak-constraint file"
bad no_constraints 'del L[5:]' "no_constraints.txt: the file has no constraints"
bad version 'L[4] = "pbng-weak-constraints 2"' "version.txt:5: unsupported weak-constraint format version"
expect_error "a missing file" "nowhere.txt: cannot open weak-constraint file" pbng_on 3 "${B[@]}" -weak "$TMP/nowhere.txt" -partitioner ptscotch -output "$o"

# two_blocks_hanging: the stacked blocks and their bindings generated in slices, on the fly and by pbng-partition
T=(-scene two_blocks_hanging -iters 60 -rtol 0 -multilevel 1) # (-res 5 generated; a file fixes it)
pbng_on 2 "${T[@]}" -res 5 -output "$TMP/tmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "two_blocks_hanging, METIS"; cat "$TMP/log"; }
for n in 1 3; do
  pbng_on "$n" "${T[@]}" -res 5 -partitioner ptscotch -output "$TMP/tfly$n.h5" > "$TMP/tfly$n.log" 2>&1 && ok || { fail "two_blocks_hanging, ptscotch on $n"; cat "$TMP/tfly$n.log"; }
  same "$TMP/tmetis.h5" "$TMP/tfly$n.h5" "two_blocks_hanging, -partitioner ptscotch on the fly, $n ranks"
done
grep -q "^partitioner: PT-Scotch, 3 parts on 3 ranks, stacked blocks (res 5): generate" "$TMP/tfly3.log" && grep -q "25 weak constraints" "$TMP/tfly3.log" && ok ||
  fail "two_blocks_hanging: not generated in slices ($(grep -i "partitioner\|weak" "$TMP/tfly3.log"))"
"$PART" -scene two_blocks_hanging -res 5 -parts 3 -output "$TMP/tblocks_metis.h5" > "$TMP/log" 2>&1 && ok || { fail "two_blocks_hanging METIS file"; cat "$TMP/log"; }
mpi 2 "$PART" -partitioner ptscotch -pbd_colors -scene two_blocks_hanging -res 5 -parts 3 -output "$TMP/tblocks.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "two_blocks_hanging, ptscotch partition"; cat "$TMP/log"; }
"$PY" "$HERE/check_partition_file.py" "$TMP/tblocks.h5" --colors "$TMP/tblocks_metis.h5" && ok || fail "the blocks' file"
pbng_on 3 "${T[@]}" -mesh "$TMP/tblocks.h5" -output "$TMP/tfile.h5" > "$TMP/log" 2>&1 && ok || { fail "two_blocks_hanging from the file"; cat "$TMP/log"; }
same "$TMP/tmetis.h5" "$TMP/tfile.h5" "two_blocks_hanging from the ptscotch file"

# two_blocks_colliding's unbound blocks in slices too
pbng_on 2 -scene two_blocks_colliding -res 5 -frames 3 -output "$TMP/cmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "two_blocks_colliding, METIS"; cat "$TMP/log"; }
pbng_on 3 -scene two_blocks_colliding -res 5 -frames 3 -partitioner ptscotch -output "$TMP/cfly.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "two_blocks_colliding, ptscotch"; cat "$TMP/log"; }
same "$TMP/cmetis.h5" "$TMP/cfly.h5" "two_blocks_colliding, -partitioner ptscotch on the fly"

[ ! -e "$o" ] && [ ! -e "$o.partial" ] && ok || fail "a failed run left $o behind"
finish
