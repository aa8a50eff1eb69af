#!/usr/bin/env bash
# Weak constraints (Sec. 4.1, Eq. 18-19): the two_blocks_hanging scene and -weak FILE. Checked: the
# output's /constraints/weak/ and an independent residual/energy check that includes them; the same
# positions bitwise on 1 and 3 ranks, partitioned on the fly or by pbng-partition (constraints
# crossing parts); PBNG and Newton reach the same equilibrium; malformed constraint files are clear
# errors with no output.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
PARTITION="$(dirname "$PBNG")/pbng-partition"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
mpi() { "$MPIEXEC" -n "$1" --oversubscribe --bind-to none "${@:2}"; }
scene=(-scene two_blocks_hanging -res 5 -iters 60 -rtol 0 -threads 1)
from_file=(-scene two_blocks_hanging -iters 60 -rtol 0 -threads 1) # the same with -mesh FILE (which fixes the resolution)

"$PBNG" "${scene[@]}" -output "$TMP/one.h5" > "$TMP/log" 2>&1 && ok || { fail "two_blocks_hanging, 1 rank"; cat "$TMP/log"; }
grep -q "25 weak constraints" "$TMP/log" && ok || fail "startup line does not count the weak constraints"
# 60 fixed iterations: measured relative residual 2.9e-9
"$PY" "$HERE/check_output.py" "$TMP/one.h5" --max-relative-residual 9e-9 --quiet && ok || fail "two_blocks_hanging: independent check"
"$PY" - "$TMP/one.h5" <<'PYEOF' && ok || fail "/constraints/weak/ content"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
nodes, w, K = (f["constraints/weak/" + d][:] for d in ("nodes", "weights", "stiffness"))
X = f["mesh/rest_positions"][:]
assert nodes.shape == (25, 8) and np.all(nodes[:, 2:] == -1), nodes[:2]
assert np.all(w[:, 0] == 1) and np.all(w[:, 1] == -1), w[:2]
assert np.allclose(K, 1e8 * np.eye(3).reshape(1, 9)), K[0]
gap = X[nodes[:, 1]] - X[nodes[:, 0]]          # lower top face -> upper bottom face: one cell up
assert np.allclose(gap, [0, 0.25, 0]), gap[:3]
PYEOF
mpi 3 "$PBNG" "${scene[@]}" -output "$TMP/three.h5" > "$TMP/log" 2>&1 && ok || { fail "3 ranks"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/three.h5" --compare "$TMP/one.h5" --rtol 0 --quiet && ok || fail "3 ranks differ from 1 rank"
"$PARTITION" -scene two_blocks_hanging -res 5 -parts 3 -output "$TMP/parts.h5" > "$TMP/log" 2>&1 && ok || { fail "pbng-partition"; cat "$TMP/log"; }
mpi 3 "$PBNG" "${from_file[@]}" -mesh "$TMP/parts.h5" -output "$TMP/parted.h5" > "$TMP/log" 2>&1 && ok || { fail "3 ranks from the partitioned file"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/parted.h5" --compare "$TMP/one.h5" --rtol 0 --quiet && ok || fail "partitioned file: differs from 1 rank"

# PBNG converges to Newton's equilibrium where the bindings are not much stiffer than the blocks
soft=(-scene two_blocks_hanging -res 4 -weak_stiffness 3e3)
"$PBNG" "${soft[@]}" -solver newton -iters 30 -rtol 1e-12 -output "$TMP/newton.h5" > "$TMP/log" 2>&1 && ok || { fail "Newton, soft bindings"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/newton.h5" --max-relative-residual 1e-12 --quiet && ok || fail "Newton: not converged"  # its -rtol; measured 1.2e-13
mpi 2 "$PBNG" "${soft[@]}" -accel chebyshev -iters 20000 -rtol 1e-11 -output "$TMP/pbng.h5" > "$TMP/log" 2>&1 && ok || { fail "PBNG, soft bindings"; cat "$TMP/log"; }
# measured difference 1.4e-9
"$PY" "$HERE/check_output.py" "$TMP/pbng.h5" --max-relative-residual 1e-11 --compare "$TMP/newton.h5" --rtol 4e-9 --quiet && ok \
  || fail "PBNG and Newton disagree with weak constraints"

# k = 1e8 (Fig. 4): with the joint weak-constraint steps (default) PBNG reaches Newton's equilibrium;
# without them (-weak_blocks 0: the paper's node-only PBNG) the bound pairs barely move
stiff=(-scene two_blocks_hanging -res 4 -threads 1)
"$PBNG" "${stiff[@]}" -solver newton -newton_pc_type lu -iters 30 -rtol 1e-13 -output "$TMP/stiff_newton.h5" > "$TMP/log" 2>&1 && ok || { fail "Newton, k = 1e8"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/stiff_newton.h5" --max-relative-residual 1e-13 --quiet && ok || fail "Newton, k = 1e8: not converged"  # measured 1.2e-14
mpi 2 "$PBNG" "${stiff[@]}" -accel chebyshev -iters 1000 -rtol 0 -output "$TMP/stiff_blocks.h5" > "$TMP/log" 2>&1 && ok || { fail "PBNG blocks, k = 1e8"; cat "$TMP/log"; }
"$PBNG" "${stiff[@]}" -accel chebyshev -iters 1000 -rtol 0 -weak_blocks 0 -output "$TMP/stiff_nodes.h5" > "$TMP/log" 2>&1 && ok || { fail "PBNG nodes, k = 1e8"; cat "$TMP/log"; }
"$PY" - "$TMP" <<'PYEOF' && ok || fail "k = 1e8: weak blocks should converge, node-only PBNG should not"
import sys, h5py, numpy as np
x = {k: h5py.File(f"{sys.argv[1]}/stiff_{k}.h5", "r")["frames/000001/positions"][:] for k in ("newton", "blocks", "nodes")}
eb, en = np.abs(x["blocks"] - x["newton"]).max(), np.abs(x["nodes"] - x["newton"]).max()
print("distance to Newton: blocks %.3e, nodes only %.3e" % (eb, en))
assert eb < 9e-9 and en > 0.06  # measured 3.1e-9 and 0.19
PYEOF

# -weak FILE on a generated mesh (isotropic and anisotropic, an interpolated point)
box=(-scene box -res 4 -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -youngs 1000 -frames 1)
mpi 2 "$PBNG" "${box[@]}" -weak "$HERE/data/box4_weak.txt" -solver newton -iters 30 -rtol 1e-12 -output "$TMP/boxn.h5" > "$TMP/log" 2>&1 && ok \
  || { fail "-weak with Newton"; cat "$TMP/log"; }
mpi 2 "$PBNG" "${box[@]}" -weak "$HERE/data/box4_weak.txt" -accel sor -iters 20000 -rtol 1e-11 -output "$TMP/boxp.h5" > "$TMP/log" 2>&1 && ok \
  || { fail "-weak with PBNG"; cat "$TMP/log"; }
# (Newton stops at its 30-step cap: measured relative residual 8.2e-10; the two differ by 3.5e-10)
"$PY" "$HERE/check_output.py" "$TMP/boxn.h5" --max-relative-residual 2.5e-9 --quiet && ok || fail "-weak: Newton not converged"
"$PY" "$HERE/check_output.py" "$TMP/boxp.h5" --max-relative-residual 1e-11 --compare "$TMP/boxn.h5" --rtol 1e-9 --quiet && ok \
  || fail "-weak: PBNG and Newton disagree"
"$PY" - "$TMP/boxp.h5" <<'PYEOF' && ok || fail "-weak: constraints not stored as given"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
nodes, w, K = (f["constraints/weak/" + d][:] for d in ("nodes", "weights", "stiffness"))
assert list(nodes[0, :5]) == [63, 0, 4, 16, 20] and np.allclose(w[0, :5], [1, -.25, -.25, -.25, -.25])
assert np.allclose(K[1].reshape(3, 3), np.diag([5, 60, 5])), K[1]
PYEOF

# bad constraint files: a clear message naming the file and line, no output
bad() {
  printf '%b' "$2" > "$TMP/bad.txt"
  expect_error "$1" "$3" "$PBNG" "${box[@]}" -weak "$TMP/bad.txt" -output "$TMP/bad.h5"
  [ ! -e "$TMP/bad.h5" ] && ok || fail "$1: output written"
}
bad "no header" '1 3 1.0 1 5 1.0 10 10\n' "not a weak-constraint file"
bad "version 2" 'pbng-weak-constraints 2\n' "unsupported weak-constraint format version"
bad "empty" 'pbng-weak-constraints 1\n# nothing\n' "has no constraints"
bad "node out of range" 'pbng-weak-constraints 1\n1 64 1.0 1 5 1.0 10 10\n' "bad.txt:2: node 64 is not an index"
bad "negative weight" 'pbng-weak-constraints 1\n2 3 1.5 4 -0.5 1 5 1.0 10 10\n' "bad.txt:2: weak constraint: weights must be finite and non-negative"
bad "weights not summing to one" 'pbng-weak-constraints 1\n2 3 0.5 4 0.4 1 5 1.0 10 10\n' "must sum to one"
bad "anisotropic without normal" 'pbng-weak-constraints 1\n1 3 1.0 1 5 1.0 10 1\n' "k_n != k_t needs a normal"
bad "zero normal" 'pbng-weak-constraints 1\n1 3 1.0 1 5 1.0 10 1 0 0 0\n' "the normal must be non-zero"
bad "negative stiffness" 'pbng-weak-constraints 1\n1 3 1.0 1 5 1.0 -10 -10\n' "stiffness must be finite and >= 0"
bad "truncated line" 'pbng-weak-constraints 1\n2 3 0.5 4\n' "bad.txt:2: expected 2 (node, weight) pairs"
bad "same node twice" 'pbng-weak-constraints 1\n1 3 1.0 1 3 1.0 10 10\n' "needs two distinct nodes"
bad "trailing garbage" 'pbng-weak-constraints 1\n1 3 1.0 1 5 1.0 10 10 0 1 0 7\n' "and nothing more"
bad "not a number" 'pbng-weak-constraints 1\n1 3 1.0x 1 5 1.0 10 10\n' "bad.txt:2: expected 1 (node, weight) pairs"
expect_error "missing file" "cannot open weak-constraint file" "$PBNG" "${box[@]}" -weak "$TMP/none.txt" -output "$TMP/bad.h5"
expect_error "-weak with a partitioned mesh" "give the weak constraints to pbng-partition" \
  "$PBNG" "${from_file[@]}" -mesh "$TMP/parts.h5" -weak "$HERE/data/box4_weak.txt" -output "$TMP/bad.h5"
expect_error "-weak_stiffness 0" "must be > 0" "$PBNG" "${scene[@]}" -weak_stiffness 0 -output "$TMP/bad.h5"
finish
