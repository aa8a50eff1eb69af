#!/usr/bin/env bash
# Bindings between bodies (-bind_distance, contact/bindings.h) with -partitioner ptscotch: found without any process
# holding the whole mesh (the distributed contact detector at rest on a first partition of the slices, the bindings put in
# the serial order and added to the slices, which are partitioned again): on two Res-8 boxes of an HDF5 mesh file, the
# second shifted so that the bindings interpolate triangles, anisotropic, the constraint rows and the positions bitwise
# the METIS run's on 1 and 3 ranks; -bind_apart with the file's sets; pbng-partition's file with the METIS file's
# constraints and colors, run bitwise; multilevel with the bindings carried to a coarse level on every rank; -bind_snap
# refused with the way around it.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"
same_rows() { # A B WHAT: the two results' /constraints/weak rows are equal
  "$PY" -c 'import h5py, numpy as np, sys
a, b = (h5py.File(p, "r")["constraints/weak"] for p in sys.argv[1:3])
sys.exit(0 if set(a) == set(b) and all(np.array_equal(a[k][:], b[k][:]) for k in a) else 1)' "$1" "$2" && ok || fail "$3: the weak-constraint rows differ from the METIS run's"
}

"$PBNG" -scene box -res 8 -frames 0 -output "$TMP/b8.h5" > "$TMP/log" 2>&1 && ok || { fail "the Res-8 result"; cat "$TMP/log"; }
"$PY" - "$TMP/b8.h5" "$TMP/two.h5" <<'PYEOF' && ok || fail "writing the two boxes"
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "r") as f:
    X, T = f["/mesh/rest_positions"][:], f["/mesh/tetrahedra"][:]
n = len(X)
with h5py.File(sys.argv[2], "w") as f:
    f["/mesh/rest_positions"] = np.vstack([X, X + [0.07, 1.1, 0.05]])  # above a gap of 0.1, its nodes off the lower's
    f["/mesh/tetrahedra"] = np.vstack([T, T + n])
    f["/sets/lower"], f["/sets/upper"] = np.arange(n), np.arange(n, 2 * n)
PYEOF
S=(-scene box -mesh "$TMP/two.h5" -frames 1 -iters 30 -rtol 0 -multilevel 1 -gravity 0,-9.8,0 -fix_box 0,2.05,0,2,2.2,2 -bind_distance 0.2 -bind_stiffness 1e4,1e2)
pbng_on 2 "${S[@]}" -output "$TMP/metis.h5" > "$TMP/metis.log" 2>&1 && ok || { fail "METIS with bindings"; cat "$TMP/metis.log"; }
for n in 1 3; do
  pbng_on "$n" "${S[@]}" -partitioner ptscotch -output "$TMP/fly$n.h5" > "$TMP/fly$n.log" 2>&1 && ok || { fail "ptscotch with bindings on $n"; cat "$TMP/fly$n.log"; }
  same "$TMP/metis.h5" "$TMP/fly$n.h5" "bindings, -partitioner ptscotch on $n ranks"
  same_rows "$TMP/metis.h5" "$TMP/fly$n.h5" "bindings, -partitioner ptscotch on $n ranks"
done
line=$(grep "^bindings:" "$TMP/metis.log")
[ -n "$line" ] && [ "$line" = "$(grep "^bindings:" "$TMP/fly3.log")" ] && "$PY" -c 'import h5py, sys, numpy as np
w = h5py.File(sys.argv[1], "r")["constraints/weak/weights"][:]
sys.exit(0 if len(w) > 100 and np.any((np.abs(w) > 0) & (np.abs(w) < 1)) else 1)' "$TMP/fly3.h5" && ok ||
  fail "not the METIS run's report, or no binding to a triangle's inner point ($line)"
# -bind_apart with the file's node sets: every pair left out, as on the METIS path
pbng_on 2 "${S[@]}" -bind_apart lower,upper -output "$TMP/apart_metis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS -bind_apart"; cat "$TMP/log"; }
pbng_on 3 "${S[@]}" -bind_apart lower,upper -partitioner ptscotch -output "$TMP/apart.h5" > "$TMP/apart.log" 2>&1 &&
  grep -q "^bindings: 0 weak constraints between bodies within 0.2 of each other (-bind_distance), [1-9][0-9]* pairs left unbound between the sets lower,upper" \
    "$TMP/apart.log" && ok || { fail "ptscotch -bind_apart"; cat "$TMP/apart.log"; }
same "$TMP/apart_metis.h5" "$TMP/apart.h5" "-bind_apart, -partitioner ptscotch"
expect_error "-bind_apart, an unknown set" "-bind_apart: $TMP/two.h5 has no node set \"middle\"" pbng_on 2 "${S[@]}" -bind_apart lower,middle -partitioner ptscotch -output "$TMP/x.h5"
# pbng-partition: the file's bindings and colors the METIS file's, a run on it bitwise
"$PART" -mesh "$TMP/two.h5" -bind_distance 0.2 -bind_stiffness 1e4,1e2 -parts 3 -output "$TMP/pmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "METIS partition"; cat "$TMP/log"; }
mpi 2 "$PART" -partitioner ptscotch -pbd_colors -mesh "$TMP/two.h5" -bind_distance 0.2 -bind_stiffness 1e4,1e2 -parts 3 -output "$TMP/pt.h5" > "$TMP/log" 2>&1 &&
  grep -q "^bindings: " "$TMP/log" && ok || { fail "ptscotch partition with bindings"; cat "$TMP/log"; }
"$PY" "$HERE/check_partition_file.py" "$TMP/pt.h5" --colors "$TMP/pmetis.h5" && ok || fail "the file's bindings and colors"
F=(-scene box -frames 1 -iters 30 -rtol 0 -multilevel 1 -gravity 0,-9.8,0 -fix_box 0,2.05,0,2,2.2,2)
pbng_on 3 "${F[@]}" -mesh "$TMP/pt.h5" -output "$TMP/file.h5" > "$TMP/log" 2>&1 && ok || { fail "run from the file"; cat "$TMP/log"; }
same "$TMP/metis.h5" "$TMP/file.h5" "bindings from the ptscotch file"

# multilevel: the bindings carried to the coarse level (on every rank) like any weak constraint
M=(-scene two_blocks_colliding -res 7 -contact 0 -mode quasistatic -frames 1 -iters 4 -rtol 0 -multilevel 2 -multilevel_min_nodes_per_rank 0
   -bind_distance 0.3 -gravity 0,-9.8,0 -fix_box 0,2,0,1,2.2,1)
pbng_on 2 "${M[@]}" -output "$TMP/mlmetis.h5" > "$TMP/log" 2>&1 && ok || { fail "multilevel bindings, METIS"; cat "$TMP/log"; }
pbng_on 3 "${M[@]}" -partitioner ptscotch -output "$TMP/mlfly.h5" > "$TMP/mlfly.log" 2>&1 &&
  grep -q "^level 0 (generated stacked blocks, res 4): .*, 98 weak constraints, .* per rank$" "$TMP/mlfly.log" && ok ||
  { fail "multilevel bindings, ptscotch"; cat "$TMP/mlfly.log"; }
same "$TMP/mlmetis.h5" "$TMP/mlfly.h5" "multilevel bindings, -partitioner ptscotch"

o="$TMP/x.h5"
expect_error "-bind_snap" "it does not snap bound vertices (-bind_snap: the moves go body after body over the whole mesh); leave out -bind_snap" \
  pbng_on 2 "${S[@]}" -bind_snap -partitioner ptscotch -output "$o"
[ ! -e "$o" ] && [ ! -e "$o.partial" ] && ok || fail "a failed run left $o behind"
finish
