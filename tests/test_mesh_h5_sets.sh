#!/usr/bin/env bash
# Node sets (/sets/<name>) of an HDF5 mesh through -partitioner ptscotch (docs/output.md#hdf5-mesh-input): read in shares,
# routed to the slices of their nodes, restricted to each piece as pbng_submesh_extract restricts them. The Gmsh cube
# converted with its groups (left, right, body), held by -fix_group left and pulled by -bc0_group right: pbng on the fly
# with PT-Scotch on 1, 2, 3 ranks and from pbng-partition's PT-Scotch files of 1, 2, 3 processes gives the METIS run's
# positions bitwise; the files' sets are the mesh's, restricted exactly to each part (checked independently, on a file
# with 70 sets too: several membership words per node); a damaged set, a set that selects no node: the serial errors.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"
sets_ok() { "$PY" "$HERE/check_partition_file.py" "$1" --sets "$2" && ok || fail "$3: the file's node sets"; }

"$PBNG_BIN/pbng-convert" "$PBNG_TEST_DATA/cube_fine_v41.msh" "$TMP/cube.h5" > "$TMP/log" 2>&1 && grep -q "3 node sets" "$TMP/log" && ok ||
  { fail "pbng-convert"; cat "$TMP/log"; }
g=(-gravity 0,-9.8,0 -youngs 1e4 -frames 2 -iters 40 -multilevel 1 -rtol 0 -fix_group left -bc0_group right -bc0_velocity 0.5,0,0)
pbng_on 2 "${g[@]}" -mesh "$TMP/cube.h5" -output "$TMP/metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS run"; cat "$TMP/log"; }
# the sets act: left at rest, right moved along +x by one amount, the rest not
"$PY" - "$TMP/cube.h5" "$TMP/metis.h5" <<'PYEOF' && ok || fail "the METIS run does not hold left and pull right"
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "r") as m, h5py.File(sys.argv[2], "r") as r:
    left, right = m["/sets/left"][:], m["/sets/right"][:]
    X = r["/mesh/rest_positions"][:]
    u = r["/frames/%06d/positions" % (len(r["/frames"]) - 1)][:] - X
assert np.all(u[left] == 0), "left moved"
assert np.all(u[right, 0] > 0) and np.ptp(u[right, 0]) == 0 and np.all(u[right, 1:] == 0), "right not pulled as one"
assert np.any(u[np.setdiff1d(np.arange(len(X)), np.concatenate([left, right]))] != 0), "nothing else moved"
PYEOF
"$PART" -mesh "$TMP/cube.h5" -parts 3 -output "$TMP/metis_parts.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition"; cat "$TMP/log"; }
sets_ok "$TMP/metis_parts.h5" "$TMP/cube.h5" "the METIS file"
for n in 1 2 3; do
  pbng_on "$n" "${g[@]}" -mesh "$TMP/cube.h5" -partitioner ptscotch -output "$TMP/fly$n.h5" > "$TMP/log" 2>&1 && ok ||
    { fail "ptscotch on the fly, $n ranks"; cat "$TMP/log"; }
  same "$TMP/metis.h5" "$TMP/fly$n.h5" "-partitioner ptscotch on the fly, $n ranks"
  mpi "$n" "$PART" -partitioner ptscotch -pbd_colors -mesh "$TMP/cube.h5" -parts 3 -output "$TMP/pt$n.h5" > "$TMP/log" 2>&1 && ok ||
    { fail "pbng-partition ptscotch on $n"; cat "$TMP/log"; }
  "$PY" "$HERE/check_partition_file.py" "$TMP/pt$n.h5" --colors "$TMP/metis_parts.h5" && ok || fail "the file of $n processes"
  sets_ok "$TMP/pt$n.h5" "$TMP/cube.h5" "the PT-Scotch file of $n processes"
  pbng_on 3 "${g[@]}" -mesh "$TMP/pt$n.h5" -output "$TMP/file$n.h5" > "$TMP/log" 2>&1 && ok || { fail "run from pt$n.h5"; cat "$TMP/log"; }
  same "$TMP/metis.h5" "$TMP/file$n.h5" "pbng on the PT-Scotch file of $n processes"
done

# the set check fails on a file whose part lost a member
"$PY" - "$TMP/pt2.h5" "$TMP/lost.h5" <<'PYEOF' && ok || fail "writing lost.h5"
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    s = [k for k in f["/sets"] if f["/sets/" + k].attrs["name"] in ("left", b"left")][0]
    m = f[f"/sets/{s}/members"]
    m[0] = m[1]
PYEOF
"$PY" "$HERE/check_partition_file.py" "$TMP/lost.h5" --sets "$TMP/cube.h5" > "$TMP/log" 2>&1 && fail "the set check passes a damaged set" ||
  { grep -q "set left has" "$TMP/log" && ok || { fail "the set check's message"; cat "$TMP/log"; }; }

# 70 sets (several membership words per node), an empty one and a damaged one
"$PY" - "$TMP/cube.h5" "$TMP" <<'PYEOF' && ok || fail "writing the files with more sets"
import h5py, numpy as np, shutil, sys
src, d = sys.argv[1], sys.argv[2]
shutil.copy(src, f"{d}/many.h5")
with h5py.File(f"{d}/many.h5", "r+") as f:
    rng = np.random.default_rng(7)
    for k in range(67):  # with left, right, body: 70; entries in any order, some twice
        f[f"/sets/s{k:02d}"] = rng.integers(0, 240, size=int(rng.integers(0, 60))).astype(np.int64)
shutil.copy(src, f"{d}/empty.h5")
with h5py.File(f"{d}/empty.h5", "r+") as f:
    f["/sets/nothing"] = np.zeros(0, dtype=np.int64)
shutil.copy(src, f"{d}/badset.h5")
with h5py.File(f"{d}/badset.h5", "r+") as f:
    ids = f["/sets/right"][:]
    ids[40] = 240
    del f["/sets/right"]
    f["/sets/right"] = ids
PYEOF
for n in 2 3; do
  mpi "$n" "$PART" -partitioner ptscotch -mesh "$TMP/many.h5" -parts 4 -output "$TMP/many$n.h5" > "$TMP/log" 2>&1 && ok ||
    { fail "70 sets on $n processes"; cat "$TMP/log"; }
  sets_ok "$TMP/many$n.h5" "$TMP/many.h5" "70 sets on $n processes"
done
e=(-gravity 0,-9.8,0 -frames 1 -multilevel 1 -fix_group nothing -mesh "$TMP/empty.h5")
expect_error "an empty set, METIS" "boundary condition nothing selects no node of the mesh" pbng_on 2 "${e[@]}" -output "$TMP/x.h5"
expect_error "an empty set, ptscotch" "boundary condition nothing selects no node of the mesh" pbng_on 3 "${e[@]}" -partitioner ptscotch -output "$TMP/x.h5"
expect_error "no such set, ptscotch" "has no node set (physical group) named \"nosuch\"" \
  pbng_on 2 -frames 1 -multilevel 1 -fix_group nosuch -mesh "$TMP/cube.h5" -partitioner ptscotch -output "$TMP/x.h5"
msg="badset.h5: /sets/right: entry 40 is node 240, outside 0..239"
expect_error "a damaged set, METIS" "$msg" "$PART" -mesh "$TMP/badset.h5" -parts 2 -output "$TMP/x.h5"
expect_error "a damaged set, ptscotch" "$msg" mpi 3 "$PART" -partitioner ptscotch -mesh "$TMP/badset.h5" -parts 2 -output "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] && [ ! -e "$TMP/x.h5.partial" ] && ok || fail "a failed run left x.h5 behind"
finish
