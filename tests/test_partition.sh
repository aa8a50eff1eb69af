#!/usr/bin/env bash
# pbng-partition writes a partitioned mesh file; pbng reads it on as many ranks as parts (each rank
# its own part) and gives bitwise the result of partitioning on the fly; mismatched part counts and
# bad input are clear errors.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
PART="$PBNG_BIN/pbng-partition"
mpirun_pbng() { local n=$1; shift; "$MPIEXEC" -n "$n" --oversubscribe --bind-to none "$PBNG" -threads 1 "$@"; }

# Res-12 box in 3 parts, the scene's boundary boxes applied on the parts
"$PART" -scene box_stretch_twist -res 12 -parts 3 -output "$TMP/box.p3.h5" > "$TMP/log" 2>&1 && ok || { fail "partition box"; cat "$TMP/log"; }
grep -q "parts: 3" "$TMP/log" && grep -q "peak memory" "$TMP/log" && ok || fail "partitioner report"
args=(-scene box_stretch_twist -frames 2 -iters 30 -accel chebyshev)
mpirun_pbng 3 "${args[@]}" -res 12 -output "$TMP/fly.h5" > "$TMP/log" 2>&1 && ok || { fail "on-the-fly run"; cat "$TMP/log"; }
mpirun_pbng 3 "${args[@]}" -mesh "$TMP/box.p3.h5" -output "$TMP/file.h5" > "$TMP/log" 2>&1 && ok || { fail "run from file"; cat "$TMP/log"; }
# the run from file checked independently (the default tolerance 1e-3; measured 3.2e-4) and equal to the on-the-fly one
"$PY" "$HERE/check_output.py" "$TMP/file.h5" --max-relative-residual 1e-3 --compare "$TMP/fly.h5" --rtol 0 --quiet && ok ||
  fail "file and on-the-fly results differ, or the independent check of the run from file"

# Gmsh cube with physical groups in 2 parts: -fix_group works on the parts' node sets
"$PART" -mesh "$PBNG_TEST_DATA/cube_fine_v41.msh" -parts 2 -output "$TMP/cube.p2.h5" > "$TMP/log" 2>&1 && ok || { fail "partition gmsh"; cat "$TMP/log"; }
# (single-level PBNG both: a partitioned file's run has no automatic coarse levels, the defaults: line says why)
g=(-fix_group left -gravity 0,-9.8,0 -youngs 1e4 -frames 1 -iters 40 -multilevel 1)
mpirun_pbng 2 -mesh "$TMP/cube.p2.h5" "${g[@]:0:6}" -dry_run > "$TMP/log" 2>&1 && grep -q "^defaults: single-level PBNG, not multilevel: a partitioned mesh has no whole mesh to coarsen" \
  "$TMP/log" && ok || { fail "a partitioned file's default: $(grep '^defaults' "$TMP/log")"; cat "$TMP/log"; }
mpirun_pbng 2 -mesh "$PBNG_TEST_DATA/cube_fine_v41.msh" "${g[@]}" -output "$TMP/gfly.h5" > "$TMP/log" 2>&1 && ok || { fail "gmsh on the fly"; cat "$TMP/log"; }
mpirun_pbng 2 -mesh "$TMP/cube.p2.h5" "${g[@]}" -output "$TMP/gfile.h5" > "$TMP/log" 2>&1 && ok || { fail "gmsh from file"; cat "$TMP/log"; }
# (40 sweeps lower the residual: relative residual < 1, measured 0.59)
"$PY" "$HERE/check_output.py" "$TMP/gfly.h5" --max-relative-residual 1 --compare "$TMP/gfile.h5" --rtol 0 --quiet && ok ||
  fail "gmsh: file and on-the-fly differ, or the independent check"

# a different partition (METIS on the element dual graph) gives the same positions, bitwise
"$PART" -mesh "$PBNG_TEST_DATA/cube_fine_v41.msh" -parts 3 -graph dual -output "$TMP/cube.d3.h5" > "$TMP/log" 2>&1 && ok || { fail "dual partition"; cat "$TMP/log"; }
mpirun_pbng 3 -mesh "$TMP/cube.d3.h5" "${g[@]}" -output "$TMP/gdual.h5" > "$TMP/log" 2>&1 && ok || { fail "gmsh from dual partition"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/gfly.h5" --compare "$TMP/gdual.h5" --rtol 0 --quiet && ok || fail "dual partition changes the result"
expect_error "unknown graph" "known graphs are node" "$PART" -scene box -res 4 -parts 2 -graph hyper -output "$TMP/z.h5"

expect_error "partitioner unknown option" "unknown option -prts" "$PART" -scene box -res 4 -prts 2 -output "$TMP/z.h5"
"$PY" - "$TMP/fly.h5" "$TMP/nomesh.h5" <<'PYEOF' && ok || fail "writing a result without its /mesh"
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    del f["/mesh/rest_positions"]
PYEOF
expect_error "a result file without /mesh is no mesh" "$TMP/nomesh.h5" "$PBNG" -mesh "$TMP/nomesh.h5" -output "$TMP/x.h5"
expect_error "part count mismatch" "has 3 parts but pbng runs on 2 ranks" mpirun_pbng 2 -mesh "$TMP/box.p3.h5" -output "$TMP/x.h5"
expect_error "partitioner without output" "-output FILE.h5 is required" "$PART" -scene box -res 4 -parts 2
expect_error "partitioner bad mesh" "nosuch.msh" "$PART" -mesh "$TMP/nosuch.msh" -parts 2 -output "$TMP/y.h5"
[ ! -e "$TMP/x.h5" ] && [ ! -e "$TMP/y.h5" ] && ok || fail "a failed run left output behind"

# damaged partitioned files: HDF5 files pbng cannot use say what they are; a part that is damaged makes
# the rank reading it fail alone, and every rank exits (bounded by `timeout`) with its message
"$PART" -scene box_stretch_twist -res 6 -parts 2 -output "$TMP/p2.h5" > "$TMP/log" 2>&1 && ok || { fail "partition p2"; cat "$TMP/log"; }
"$PY" - "$TMP" <<'PYEOF' && ok || fail "writing the damaged files"
import h5py, numpy as np, shutil, sys
d = sys.argv[1]
def damage(name, edit):
    shutil.copy(d + "/p2.h5", d + "/" + name)
    with h5py.File(d + "/" + name, "r+") as f:
        edit(f, f["/nodes/offset"][1, 0], f["/elements/offset"][1, 0])
damage("version.h5", lambda f, n1, e1: f.attrs.modify("format", np.bytes_("pbng-partition-9")))
damage("elem.h5", lambda f, n1, e1: f["/elements/nodes"].__setitem__((e1 + 3, 2), 100000))
damage("nan.h5", lambda f, n1, e1: f["/nodes/X"].__setitem__((n1 + 2, 0), np.nan))
damage("global.h5", lambda f, n1, e1: f["/nodes/global"].__setitem__((n1 + 1, 0), -5))
damage("nowned.h5", lambda f, n1, e1: f["/parts/nowned"].__setitem__((1, 0), 10**6))
damage("offset.h5", lambda f, n1, e1: f["/nodes/offset"].__setitem__((2, 0), 10**9))
def both_parts(f, n1, e1):  # a different damage in each part: every rank fails, each for its own reason
    f["/nodes/X"][2, 0] = np.nan
    f["/elements/nodes"][e1 + 3, 2] = 100000
damage("both.h5", both_parts)
PYEOF
head -c 20000 "$TMP/p2.h5" > "$TMP/truncated.h5"
# (-failure_timeout 0.5: how long the rank that failed alone waits for the other before aborting the run; the
# case where both fail, each for its own reason, keeps 2 s so that both reach their error path on a loaded machine)
on2=(timeout 120 "$MPIEXEC" -n 2 --oversubscribe --bind-to none "$PBNG" -threads 1 -frames 1 -iters 2 -output "$TMP/x.h5")
t=("${on2[@]}" -failure_timeout 0.5 -mesh)
expect_error "truncated partitioned file" "truncated.h5: an HDF5 file that HDF5 cannot open (truncated or damaged?)" "${t[@]}" "$TMP/truncated.h5"
expect_error "other format version" "a partitioned mesh of format 'pbng-partition-9', but this pbng reads 'pbng-partition-1'" "${t[@]}" "$TMP/version.h5"
expect_error "a result without /mesh" "an HDF5 file of format 'pbng-1' (a pbng checkpoint?), neither a partitioned mesh nor a mesh" "${t[@]}" "$TMP/nomesh.h5"
expect_error "element index out of range in part 1" "pbng: error on rank 1: $TMP/elem.h5: part 1: /elements/nodes holds 100000" "${t[@]}" "$TMP/elem.h5"
expect_error "NaN in part 1" "part 1: /nodes/X: node 2 of this part has a non-finite coordinate" "${t[@]}" "$TMP/nan.h5"
expect_error "global id out of range in part 1" "part 1: /nodes/global holds -5" "${t[@]}" "$TMP/global.h5"
expect_error "nowned beyond the part" "part 1: /parts/nowned is 1000000" "${t[@]}" "$TMP/nowned.h5"
# errors are reported once for the job: the same message once, different ones once each naming their ranks
"${t[@]}" "$TMP/box.p3.h5" > "$TMP/log" 2>&1 || true
[ "$(grep -c '^pbng: error' "$TMP/log")" = 1 ] && ok || { fail "a collective error should be printed once"; cat "$TMP/log"; }
"${on2[@]}" -failure_timeout 2 -mesh "$TMP/both.h5" > "$TMP/log" 2>&1 || true
grep -q "^pbng: error on rank 0: .*part 0: /nodes/X: node 2 of this part has a non-finite coordinate" "$TMP/log" \
  && grep -q "^pbng: error on rank 1: .*part 1: /elements/nodes holds 100000" "$TMP/log" && [ "$(grep -c '^pbng: error' "$TMP/log")" = 2 ] \
  && ! grep -q "did not stop within" "$TMP/log" && ok || { fail "different errors on every rank: one line each"; cat "$TMP/log"; }
expect_error "offset beyond the datasets" "pbng: error on rank 1: $TMP/offset.h5: cannot read /nodes/X" "${t[@]}" "$TMP/offset.h5"
finish
