#!/usr/bin/env bash
# Connective tissue (-bind_distance; contact/bindings.h): two Res-4 blocks a cell (h = 1/3) apart along y
# (the two_blocks_colliding mesh, contacts off) are bound exactly where an independent computation says: every vertex of
# the two facing faces to the vertex straight across (weights +1 / -1, the pair h apart along y), 2 x 16 bindings, none
# with d below the gap; -bind_apart leaves out pairs between two listed sets; -bind_snap moves the lower block's facing
# vertices onto the upper block and binds them at zero length (C stays 0 under a rigid motion, where the plain rest offset
# opens); the same rows on 1 and 3 ranks and from pbng-partition; quasistatic runs with them checked independently, the
# default and Newton at one equilibrium; bad values refused.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
blocks=(-scene two_blocks_colliding -res 4 -contact 0 -frames 0 -threads 1)

"$PBNG" "${blocks[@]}" -bind_distance 0.4 -output "$TMP/b1.h5" > "$TMP/log" 2>&1 && ok || { fail "bind"; cat "$TMP/log"; }
grep -q "bindings: 32 weak constraints between bodies within 0.4" "$TMP/log" && ok || fail "bindings: not 32 reported: $(grep bindings "$TMP/log")"
"$PY" - "$TMP/b1.h5" <<'PYEOF' && ok || fail "the bindings are not the facing vertices bound straight across"
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], "r")
X = f["mesh/rest_positions"][()]
nodes, w = f["constraints/weak/nodes"][()], f["constraints/weak/weights"][()]
h = 1.0 / 3
# independently: the facing faces are the lower block's top (y = 1) and the upper block's bottom (y = 1 + h)
lower_top = np.flatnonzero(np.isclose(X[:, 1], 1.0, atol=1e-12))
upper_bottom = np.flatnonzero(np.isclose(X[:, 1], 1.0 + h, atol=1e-12))
assert len(lower_top) == 16 and len(upper_bottom) == 16, (len(lower_top), len(upper_bottom))
expected = set()
for a_side, b_side in ((lower_top, upper_bottom), (upper_bottom, lower_top)):
    for v in a_side:
        across = [u for u in b_side if np.allclose(X[u, [0, 2]], X[v, [0, 2]], atol=1e-12)]
        assert len(across) == 1
        expected.add((int(v), int(across[0])))
found = set()
for row, wr in zip(nodes, w):
    used = row >= 0
    assert used.sum() == 2 and np.allclose(sorted(wr[used]), [-1.0, 1.0], atol=1e-12), (row, wr)
    v, u = int(row[used][wr[used] > 0][0]), int(row[used][wr[used] < 0][0])
    assert abs(np.linalg.norm(X[v] - X[u]) - h) < 1e-12
    found.add((v, u))
assert found == expected and len(nodes) == 32, (len(found), len(expected), len(nodes))
PYEOF
# -bind_apart: no binding joins nodes of two different listed sets (the blocks' own sets: none is left)
"$PBNG" "${blocks[@]}" -bind_distance 0.4 -bind_apart lower_block,upper_block -output "$TMP/ba.h5" > "$TMP/log" 2>&1 &&
  grep -q "bindings: 0 weak constraints.*32 pairs left unbound between the sets lower_block,upper_block" "$TMP/log" && ok ||
  { fail "-bind_apart"; cat "$TMP/log"; }
# -bind_snap: one side binds (the lower block: the lower body label), its top vertices moved up onto the upper block's
# bottom (by h), zero-length bindings to the vertex straight across; under a rigid motion such a binding stays at C = 0,
# where a rest offset fixed in space (the plain bindings above) opens to |(R - I) t|
"$PBNG" "${blocks[@]}" -bind_distance 0.4 -bind_snap -output "$TMP/bs.h5" > "$TMP/log" 2>&1 &&
  grep -q "bindings: 16 weak constraints.*moved onto the surfaces they bind to by at most 0.333 (-bind_snap)" "$TMP/log" && ok ||
  { fail "-bind_snap"; cat "$TMP/log"; }
"$PY" - "$TMP/b1.h5" "$TMP/bs.h5" <<'PYEOF' && ok || fail "-bind_snap: not the lower block's top vertices moved onto the upper block, bound at zero length"
import h5py, numpy as np, sys
plain, snap = (h5py.File(p, "r") for p in sys.argv[1:])
X0, X = plain["mesh/rest_positions"][()], snap["mesh/rest_positions"][()]
h = 1.0 / 3
top = np.flatnonzero(np.isclose(X0[:, 1], 1.0, atol=1e-12))
moved = np.flatnonzero(np.abs(X - X0).max(axis=1) > 0)
assert np.array_equal(moved, top) and np.allclose(X[top] - X0[top], [0, h, 0], atol=1e-12), (moved, top)
Q, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))
Q *= np.sign(np.linalg.det(Q))
def C(f, Y):
    nodes, w, t = f["constraints/weak/nodes"][()], f["constraints/weak/weights"][()], f["constraints/weak/target"][()]
    return np.einsum("cj,cjd->cd", w, Y[np.maximum(nodes, 0)]) - t, nodes
Cs, nodes = C(snap, X)
assert len(nodes) == 16 and set(nodes[:, 0]) == set(top) and np.abs(Cs).max() < 1e-15, (len(nodes), np.abs(Cs).max())
turned = C(snap, X @ Q.T + [0.2, 1.0, -0.5])[0]
assert np.abs(turned).max() < 1e-13, np.abs(turned).max()
fixed = C(plain, X0 @ Q.T + [0.2, 1.0, -0.5])[0]
assert np.linalg.norm(fixed, axis=1).min() > 0.1 * h, np.linalg.norm(fixed, axis=1).min()
PYEOF
# none beyond d: below the gap nothing is bound
"$PBNG" "${blocks[@]}" -bind_distance 0.3 -output "$TMP/b0.h5" > "$TMP/log" 2>&1 && grep -q "bindings: 0 weak constraints" "$TMP/log" && ok ||
  { fail "d below the gap bound something"; cat "$TMP/log"; }
# the same rows on 3 ranks, and from a partitioned file
"$MPIEXEC" -n 3 --oversubscribe --bind-to none "$PBNG" "${blocks[@]}" -bind_distance 0.4 -output "$TMP/b3.h5" > "$TMP/log" 2>&1 && ok || { fail "3 ranks"; cat "$TMP/log"; }
"$PBNG_BIN/pbng-partition" -scene two_blocks_colliding -res 4 -bind_distance 0.4 -parts 2 -output "$TMP/b.p2.h5" > "$TMP/plog" 2>&1 && ok ||
  { fail "pbng-partition -bind_distance"; cat "$TMP/plog"; }
"$MPIEXEC" -n 2 --oversubscribe --bind-to none "$PBNG" -mesh "$TMP/b.p2.h5" -contact 0 -frames 0 -threads 1 -fix_box 0,0,0,1,0,1 -output "$TMP/bp.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "run from the partitioned file"; cat "$TMP/log"; }
"$PY" - "$TMP/b1.h5" "$TMP/b3.h5" "$TMP/bp.h5" <<'PYEOF' && ok || fail "the bindings differ between 1 rank, 3 ranks and the partitioned file"
import h5py, numpy as np, sys
rows = [{k: h5py.File(p, "r")[f"constraints/weak/{k}"][()] for k in ("nodes", "weights", "spring")} for p in sys.argv[1:]]
for r in rows[1:]:
    for k in r:
        assert np.array_equal(r[k], rows[0][k]), k
PYEOF
# quasistatic runs with bindings (Res-5 blocks, gap 1/4, k_n, k_t along the normal): the default (multilevel: its coarse
# levels carry the bindings) and Newton pass the independent checker and end at the same equilibrium (last frame measured
# 1.0e-8 apart; the first frame's soft modes leave 2e-4 at -rtol 1e-6, not compared)
run=(-scene two_blocks_colliding -res 5 -contact 0 -mode quasistatic -frames 2 -threads 1 -bind_distance 0.3 -bind_stiffness 1e5,1e3 -rtol 1e-6)
"$PBNG" "${run[@]}" -output "$TMP/run.h5" > "$TMP/log" 2>&1 && grep -q "defaults: multilevel PBNG" "$TMP/log" && ok || { fail "quasistatic run with bindings"; cat "$TMP/log"; }
"$PBNG" "${run[@]}" -solver newton -output "$TMP/newton.h5" > "$TMP/log" 2>&1 && ok || { fail "Newton with bindings"; cat "$TMP/log"; }
for f in run newton; do
  "$PY" "$HERE/check_output.py" "$TMP/$f.h5" --max-relative-residual 1e-6 --quiet && ok || fail "$f with bindings: independent check"
done
"$PY" - "$TMP/run.h5" "$TMP/newton.h5" <<'PYEOF' && ok || fail "the default and Newton end at different equilibria"
import h5py, numpy as np, sys
a, b = (h5py.File(p, "r") for p in sys.argv[1:])
d = np.abs(a["frames/000002/positions"][()] - b["frames/000002/positions"][()]).max()
assert d < 3e-8, d
PYEOF
# bad values
expect_error "zero distance" "-bind_distance 0" "$PBNG" "${blocks[@]}" -bind_distance 0 -output "$TMP/bad.h5"
expect_error "negative distance" "-bind_distance -1" "$PBNG" "${blocks[@]}" -bind_distance -1 -output "$TMP/bad.h5"
expect_error "negative stiffness" "need k_n, k_t >= 0, finite, not both 0" "$PBNG" "${blocks[@]}" -bind_distance 0.4 -bind_stiffness -1 -output "$TMP/bad.h5"
expect_error "three stiffness values" "-bind_stiffness: more than 2 values" "$PBNG" "${blocks[@]}" -bind_distance 0.4 -bind_stiffness 1,2,3 -output "$TMP/bad.h5"
expect_error "stiffness without distance" "-bind_stiffness has no effect" "$PBNG" "${blocks[@]}" -bind_stiffness 1e5 -output "$TMP/bad.h5"
expect_error "snap without distance" "-bind_snap has no effect" "$PBNG" "${blocks[@]}" -bind_snap -output "$TMP/bad.h5"
expect_error "apart: no such set" 'has no node set "no_such_set"' "$PBNG" "${blocks[@]}" -bind_distance 0.4 -bind_apart lower_block,no_such_set -output "$TMP/bad.h5"
expect_error "partitioned input" "-bind_distance with a partitioned mesh: give it to pbng-partition" "$PBNG" -mesh "$TMP/b.p2.h5" -contact 0 \
  -frames 0 -bind_distance 0.4 -output "$TMP/bad.h5"
finish
