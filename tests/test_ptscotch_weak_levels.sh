#!/usr/bin/env bash
# Weak constraints carried to the coarse levels of multilevel PBNG with -partitioner ptscotch
# (docs/weak_constraints.md#in-parallel--partitioner-ptscotch): the fine level's constraints as springs, each rank its
# share, located in each coarse level's slices by the distributed locator and added to them before they are partitioned,
# no rank holding a whole level or all the springs: generated levels (a box with -weak, two_blocks_hanging's blocks with a
# coarse level on every rank), -mesh_levels HDF5 files read in slices, pbng-partition -multilevel on 3 processes (each
# level's file with the METIS files' constraints and colors): positions bitwise the METIS runs' (rank 0's springs on rank
# 0's whole coarse meshes); coarse levels of another kind refused as on the METIS path.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"
W="$PBNG_TEST_DATA/box8_weak.txt" # a Res-8 box's: pairs, interpolated anisotropic ones, a chain across every slice
C=(-scene box -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1000 -frames 1 -iters 30 -rtol 0)
o="$TMP/bad.h5"
for r in 8 5 3; do "$PBNG" -scene box -res $r -frames 0 -output "$TMP/b$r.h5" > "$TMP/log" 2>&1 && ok || { fail "Res-$r result"; cat "$TMP/log"; }; done

# generated levels: the box's coarse levels on one rank (the default threshold), the blocks' on all three
ML=("${C[@]}" -multilevel 3 -res 8 -weak "$W")
pbng_on 2 "${ML[@]}" -output "$TMP/mlmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "multilevel -weak, METIS"; cat "$TMP/log"; }
pbng_on 3 "${ML[@]}" -partitioner ptscotch -output "$TMP/mlfly.h5" > "$TMP/mlfly.log" 2>&1 && ok || { fail "multilevel -weak, ptscotch"; cat "$TMP/mlfly.log"; }
[ "$(grep -c '^level [0-2] (generated Res-[842] box): .*, 39 weak constraints' "$TMP/mlfly.log")" = 3 ] && ok ||
  fail "multilevel -weak: not every level with the constraints ($(grep '^level' "$TMP/mlfly.log"))"
same "$TMP/mlmetis.h5" "$TMP/mlfly.h5" "multilevel -weak, -partitioner ptscotch on the fly"
TL0=(-scene two_blocks_hanging -multilevel 2 -multilevel_min_nodes_per_rank 0 -rtol 0 -iters 4) # (-res 7 generated; files fix it)
TL=("${TL0[@]}" -res 7)
pbng_on 2 "${TL[@]}" -output "$TMP/tlmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "multilevel two_blocks_hanging, METIS"; cat "$TMP/log"; }
pbng_on 3 "${TL[@]}" -partitioner ptscotch -output "$TMP/tlfly.h5" > "$TMP/tlfly.log" 2>&1 && ok || { fail "multilevel blocks, ptscotch"; cat "$TMP/tlfly.log"; }
grep -q "^level 0 (generated stacked blocks, res 4): 128 nodes, 270 tetrahedra, 49 weak constraints, .* per rank$" "$TMP/tlfly.log" && ok ||
  fail "multilevel blocks: the coarse level not on every rank or without the bindings ($(grep '^level' "$TMP/tlfly.log"))"
same "$TMP/tlmetis.h5" "$TMP/tlfly.h5" "multilevel two_blocks_hanging, -partitioner ptscotch on the fly"
# pbng-partition -multilevel 2 on 3 processes: each level's file with the METIS files' constraints and colors, run bitwise
"$PART" -scene two_blocks_hanging -res 7 -parts 2 -multilevel 2 -output "$TMP/tlm.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS -multilevel 2"; cat "$TMP/log"; }
mpi 3 "$PART" -partitioner ptscotch -pbd_colors -scene two_blocks_hanging -res 7 -parts 2 -multilevel 2 -output "$TMP/tlp.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "ptscotch -multilevel 2"; cat "$TMP/log"; }
for f in tlp tlp.level1; do "$PY" "$HERE/check_partition_file.py" "$TMP/$f.h5" --colors "$TMP/${f/tlp/tlm}.h5" && ok || fail "the file $f.h5"; done
pbng_on 2 "${TL0[@]}" -mesh "$TMP/tlp.h5" -mesh_levels "$TMP/tlp.level1.h5" -output "$TMP/tlfile.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "multilevel blocks from the ptscotch files"; cat "$TMP/log"; }
same "$TMP/tlmetis.h5" "$TMP/tlfile.h5" "multilevel two_blocks_hanging from the ptscotch files"
# an HDF5 mesh file's coarse levels (-mesh_levels, read in slices) with -weak
HL=(-scene box_stretch_twist -frames 1 -multilevel 3 -mesh "$TMP/b8.h5" -mesh_levels "$TMP/b5.h5,$TMP/b3.h5" -weak "$W")
pbng_on 2 "${HL[@]}" -output "$TMP/hlmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "-mesh_levels -weak, METIS"; cat "$TMP/log"; }
pbng_on 3 "${HL[@]}" -partitioner ptscotch -output "$TMP/hlfly.h5" > "$TMP/log" 2>&1 && ok || { fail "-mesh_levels -weak, ptscotch"; cat "$TMP/log"; }
same "$TMP/hlmetis.h5" "$TMP/hlfly.h5" "-mesh_levels and -weak read in slices"
# coarse levels of another kind: the METIS path's message
expect_error "hex8 coarse levels, METIS" "weak constraints are carried to coarse levels of tetrahedra only" \
  pbng_on 2 -scene box -res 4 -element hex8 -multilevel 2 -weak "$PBNG_TEST_DATA/box4_weak.txt" -output "$o"
expect_error "hex8 coarse levels, ptscotch" "weak constraints are carried to coarse levels of tetrahedra only" \
  pbng_on 3 -scene box -res 4 -element hex8 -multilevel 2 -weak "$PBNG_TEST_DATA/box4_weak.txt" -partitioner ptscotch -output "$o"

[ ! -e "$o" ] && [ ! -e "$o.partial" ] && ok || fail "a failed run left $o behind"
finish
