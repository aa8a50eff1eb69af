#!/usr/bin/env bash
# The muscles scene (issue 41; docs/muscles.md) at -scale 0.4:
#  - the generated counts equal an independent count from the layout (docs/options.md#scenes): per muscle
#    (c + 1)^2 (l + 1) nodes and 6 c^2 l tetrahedra, c = even(round(8 s)), l = round(44 s); per bone (b + 1)^2 (m + 1)
#    nodes, 6 b^2 m tetrahedra, b = max(4, even(round(4 s))), m = round(length / (2 r_bone / b)) (humerus 0.24, forearm 0.14);
#  - the rest state is an equilibrium (bindings of zero length between the surfaces -bind_snap made touch): -flexion 0
#    needs no iteration;
#  - the 10 flexion frames (-contact_every 2, below), on 1 rank x 2 threads and 2 ranks x 1 thread: every frame to -rtol 1e-3, contacts in force
#    at the end, the independent checker's residual (with the bindings and each frame's contacts) within the tolerance,
#    no node deeper than the contact distance (0.0025 at this scale) inside another body, the bound surfaces within 1 %
#    of a belly's radius of each other (max |C| over the bindings, targets zero: measured 3e-6), no element inverted;
#  - the secant guess (the default) taken and declined by its energy guard, each frame starting where the guard says;
#  - 1 rank x 2 threads, 2 and 3 ranks x 1 thread: the whole flexion, contacts included, bitwise the same;
#  - the multilevel guard (-multilevel_guard 0.01: cycles undone, the frames still to the tolerance);
#  - PBNG (the default, multilevel) and Newton reach the same equilibrium to 1e-6 of the arm's size on the first frame with
#    the bindings (-rtol 1e-9 both);
#  - bad values refused.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
arm=(-scene muscles -scale 0.4)
# the flexion runs detect contacts every 2 cycles: at the default (every 10, then 20, 40, ...) a cycle can carry a vertex
# deep behind a neighbour's surface between detections, and the spring made there on the next detection pulls hard
# enough to invert tetrahedra (measured, -flexion 84/87/90/93/96 at this scale: 4 of 5 runs end with inverted elements
# on this build, 2 of 5 before the bitwise changes; at 90 three, J down to -0.25, in frame 10). With -contact_every 2:
# none at 84/90/93/96. The paper-size arm inverts elements either way: an open item of issue 41 (docs/muscles.md).
flex=(-contact_every 2)

# --- counts ---------------------------------------------------------------------------------------------------------
"$PBNG" "${arm[@]}" -dry_run > "$TMP/dry.log" 2>&1 && ok || { fail "dry run"; cat "$TMP/dry.log"; }
read -r nodes tets < <("$PY" - <<'PYEOF'
s = 0.4
even = lambda n: max(2, n + n % 2)
c, l, b = even(round(8 * s)), max(4, round(44 * s)), max(4, even(round(4 * s)))
h_bone = 2 * 0.01 / b
muscle_nodes, muscle_tets = (c + 1) ** 2 * (l + 1), 6 * c * c * l
bone_layers = [max(2, round(length / h_bone)) for length in (0.24, 0.14)]
nodes = 8 * muscle_nodes + sum((b + 1) ** 2 * (m + 1) for m in bone_layers)
tets = 8 * muscle_tets + sum(6 * b * b * m for m in bone_layers)
print(nodes, tets)
PYEOF
)
grep -q "pbng: muscles, $nodes nodes, $tets tetrahedra" "$TMP/dry.log" && ok \
  || fail "counts: expected $nodes nodes and $tets tetrahedra: $(grep 'pbng: muscles' "$TMP/dry.log")"
grep -q "bindings: [1-9][0-9]* weak constraints" "$TMP/dry.log" && ok || fail "no bindings: $(grep bindings "$TMP/dry.log")"

# --- the rest state is an equilibrium -----------------------------------------------------------------------------------
run rest "${arm[@]}" -flexion 0 -frames 1 -threads 2
grep -q "iters     0" "$TMP/rest.log" && ok || fail "rest: iterations at -flexion 0: $(grep '^frame' "$TMP/rest.log")"

# --- the flexion on 1 and 2 ranks ------------------------------------------------------------------------------------------
for layout in "1 2" "2 1"; do
  read -r ranks threads <<<"$layout"
  mpi "$ranks" "$PBNG" "${arm[@]}" "${flex[@]}" -threads "$threads" -output "$TMP/flex.$ranks.h5" > "$TMP/flex.$ranks.log" 2>&1 && ok \
    || { fail "flexion on $ranks rank(s)"; cat "$TMP/flex.$ranks.log"; }
  grep -q "every frame reached it" "$TMP/flex.$ranks.log" && ok || fail "flexion on $ranks rank(s): a frame stopped before -rtol"
  grep -q "^frame   10/10 .*contacts [1-9]" "$TMP/flex.$ranks.log" && ok || fail "flexion on $ranks rank(s): no contact at the end"
  check "flex.$ranks" --max-relative-residual 1e-3 --max-penetration 2.5e-3
  "$PY" - "$TMP/flex.$ranks.h5" <<'PYEOF' && ok || fail "flexion on $ranks rank(s): bound surfaces apart, or an element inverted"
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], "r")
nodes, w, t = f["constraints/weak/nodes"][()], f["constraints/weak/weights"][()], f["constraints/weak/target"][()]
X, tets = f["mesh/rest_positions"][()], f["mesh/tetrahedra"][()]
Dm_inv = np.linalg.inv(np.stack([X[tets[:, j]] - X[tets[:, 0]] for j in (1, 2, 3)], axis=2))
assert np.abs(t).max() < 1e-15, np.abs(t).max()  # -bind_snap: zero length
for k in sorted(f["frames"]):
    x = f["frames"][k]["positions"][()]
    gap = np.linalg.norm(np.einsum("cj,cjd->cd", w, x[np.maximum(nodes, 0)]) - t, axis=1).max()
    J = np.linalg.det(np.stack([x[tets[:, j]] - x[tets[:, 0]] for j in (1, 2, 3)], axis=2) @ Dm_inv)
    assert gap < 0.01 * 0.02 and J.min() > 0, (k, gap, J.min())
PYEOF
done
# -quasistatic_guess secant (opt-in with contacts) and its guard: taken in the frames before contact, declined in frames in contact
# (measured: taken in 3, declined in 6: the guess multiplied the energy by 14-850); a frame starts where the guard says, with
# the contacts detected there: its iteration-0 energy is the guess's when taken and the one at x_k when declined (before the
# contacts' history was restored, a spring made at the guess held on: frame 5 started at 12.3 instead of 0.39)
mpi 2 "$PBNG" "${arm[@]}" -threads 1 -quasistatic_guess secant -monitor -output "$TMP/guess.h5" > "$TMP/guess.log" 2>&1 && ok \
  || { fail "flexion with -quasistatic_guess secant"; cat "$TMP/guess.log"; }
grep -q "every frame reached it" "$TMP/guess.log" && ok || fail "-quasistatic_guess secant: a frame stopped before -rtol"
check guess --max-relative-residual 1e-3 --max-penetration 2.5e-3
"$PY" - "$TMP/guess.log" <<'PYEOF' && ok || fail "the secant guess's guard"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"-quasistatic_guess secant: (\d+) frame\(s\) started from the guess, (\d+) declined it", text)
assert m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1, m and m.groups()
lines, seen = text.splitlines(), {"taken": 0, "declined": 0}
for i, line in enumerate(lines):
    g = re.match(r"    secant guess: energy (\S+), at x_k (\S+): (taken|declined)$", line)
    if not g:
        continue
    start = next(l for l in lines[i + 1:] if re.match(r"    frame \d+ iter +0 ", l))
    e0, want = float(re.search(r"energy (\S+)", start).group(1)), float(g.group(1 if g.group(3) == "taken" else 2))
    assert abs(e0 - want) <= 1e-6 * abs(want), (line, start)
    assert (g.group(3) == "taken") == (float(g.group(1)) <= 4 * float(g.group(2))), line
    seen[g.group(3)] += 1
assert (seen["taken"], seen["declined"]) == (int(m.group(1)), int(m.group(2))), (seen, m.groups())
PYEOF
# 1 vs 2 vs 3 ranks: the whole flexion, contacts included, bitwise (every multilevel product sums in the input's order, the
# coarsest level is factored in the input's numbering, the line searches' and nonlinear GMRES's dots are exact sums,
# point location picks the least (distance, element id) on any partition, and every rank's copy of an element's
# corotated warm start moves at every visit of its nodes; before: 1e-9 of the arm in the frames before contact and
# different equilibria in contact, 1.7e-2 at frame 9)
mpi 3 "$PBNG" "${arm[@]}" "${flex[@]}" -threads 1 -output "$TMP/flex.3.h5" > "$TMP/flex.3.log" 2>&1 && ok || { fail "flexion on 3 ranks"; cat "$TMP/flex.3.log"; }
for ranks in 2 3; do
  "$PY" "$HERE/check_output.py" "$TMP/flex.$ranks.h5" --compare "$TMP/flex.1.h5" --rtol 0 --quiet && ok \
    || fail "flexion in contact: $ranks ranks != 1 rank (bitwise)"
done

# --- the guard on full corrections: at -multilevel_guard 0.01 a cycle that does not divide the residual by 100 is undone
# and the frame goes on with the secant line search to the tolerance (at the default 4 no cycle here is undone)
run guard "${arm[@]}" -frames 2 -threads 2 -multilevel_guard 0.01
grep -q "multilevel: a cycle of full corrections took the residual from .*: undone" "$TMP/guard.log" && ok || fail "guard: no cycle undone"
grep -q "every frame reached it" "$TMP/guard.log" && ok || fail "guard: a frame stopped before -rtol"
check guard --max-relative-residual 1e-3
grep -q "multilevel: a cycle" "$TMP/flex.1.log" "$TMP/flex.2.log" && fail "guard: a cycle undone at the default growth 4" || ok
# --- PBNG and Newton at one equilibrium -----------------------------------------------------------------------------------
run ml "${arm[@]}" -frames 1 -rtol 1e-9 -threads 2
run newton "${arm[@]}" -frames 1 -rtol 1e-9 -solver newton -threads 2
check ml --compare "$TMP/newton.h5" --rtol 1e-6

# --- misuse -----------------------------------------------------------------------------------------------------------------
expect_error "flexion out of range" "must be in [0, 150] degrees" "$PBNG" "${arm[@]}" -flexion 200 -output "$TMP/bad.h5"
expect_error "flexion elsewhere" "-flexion is for -scene muscles" "$PBNG" -scene box -flexion 10 -output "$TMP/bad.h5"
expect_error "guard" "-multilevel_guard -1.: must be >= 0" "$PBNG" "${arm[@]}" -multilevel_guard -1 -output "$TMP/bad.h5"
expect_error "res" "-res does not size the arm of -scene muscles: use -scale" "$PBNG" "${arm[@]}" -res 8 -output "$TMP/bad.h5"
finish
