#!/usr/bin/env bash
# -scene cloth_on_table and -scene projectile_sheet (issue 20; the peridynamic seed's Sec. 7.2, Fig. 7 and 11;
# docs/peridynamics.md#scenes-cloth_on_table-and-projectile_sheet):
#  - cloth_on_table: the 21 x 21 sheet (441 nodes) and its four box obstacles (table and three books) in the file;
#    3 frames of 0.025 s (the sheet reaches the top book): -monitor shows the contact step's pairs; no vertex of the
#    sheet within xi = 1.4 mm of another primitive or an obstacle in any frame (check_thickness.py, independent);
#    the part over the top book held above it, the rest fallen past it;
#  - projectile_sheet: the sheet (441 nodes) and the level-2 icosphere (162 nodes), the top edge fixed, the shell's
#    nodes at 15 m/s at the start (the frame 0 -> 1 difference); with the defaults (the seed's s0 = 8000 read per unit
#    area: 8000 / xi = 1.31e6 Pa, k_b 0.005 s0) the shell's centroid velocity falls from 15 m/s and reverses within 23
#    frames (bounces off), and the bodies stay more than xi = 6.1 mm apart in every frame; with the seed's 8000 taken
#    literally (-pd_s0 8000 -pd_kb 40) the first 7 frames run (a ring inverts at frame 8-10), the shell slows a little
#    and the thickness holds;
#  - projectile_sheet with -pd_contact_rest_exclusion 10 (more than the scene's size) on 3 ranks (the contact step's
#    surface halo: pairs across ranks, no rank holding the whole surface): the bodies still meet the barrier (the
#    exclusion is within one body), and the first 6 frames are the 1-rank default run's (3e-19);
#  - the contact step's kept candidate list and stages give the positions of a fresh broad phase every stage, bitwise
#    (12 frames, -pd_contact_fresh_pairs), and that comparison can fail;
#  - -res on these scenes is refused (use -scale); -scale 2 gives 41 x 41 (+ a level-3 icosphere: 642 nodes, which
#    leave at 15 m/s).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

thickness() { "$PY" "$HERE/check_thickness.py" "$TMP/$1.h5" && ok || fail "$1: a pair of primitives within the contact thickness"; }
# contact_seen NAME: the -monitor lines of the run show the contact step with pairs within reach
contact_seen() {
  grep -E "contact pairs [1-9][0-9]* clamped" "$TMP/$1.log" | tail -1 | grep -q "min_distance" && ok \
    || fail "$1: -monitor shows no contact pairs: $(grep 'contact pairs' "$TMP/$1.log" | tail -1)"
}

# ---- cloth_on_table
run table -scene cloth_on_table -frames 3 -dt 0.025 -threads 1 -monitor
head -1 "$TMP/table.log" | grep -q "^pbng: cloth_on_table, 441 nodes" && ok || fail "table header: $(head -1 "$TMP/table.log")"
head -1 "$TMP/table.log" | grep -q "sissm, peridynamic sheet stretching s0 8000, k_b 24, xi 0.0014, h 0.0014, dynamic" && ok \
  || fail "table: the seed's material: $(head -1 "$TMP/table.log")"
contact_seen table
thickness table
"$PY" - "$TMP/table.h5" <<'EOF' && ok || fail "table: obstacles, sheet lands on them"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
obs = np.asarray(f.attrs["pd_obstacles"]).reshape(-1, 7)
bad = []
if len(obs) != 4: bad.append(f"{len(obs)} obstacles, expected the table and three books")
if abs(float(f.attrs["pd_contact_dhat"]) - 4 * 1.4e-3) > 1e-12: bad.append(f"dhat {f.attrs['pd_contact_dhat']} is not 4 xi")
frames = sorted(f["frames"])
x = f["frames"][frames[-1]]["positions"][...]
X = f["mesh/rest_positions"][...]
# the sheet fell, and the part over the top book is held above it (y > -0.02 + xi) while the free part fell further
over = (x[:, 0] > 0.57) & (x[:, 0] < 0.71) & (x[:, 2] > 0.29) & (x[:, 2] < 0.43)
low = x[:, 1].min()
if not over.any(): bad.append("no vertex over the top book")
elif x[over, 1].min() <= -0.02 + 1.4e-3: bad.append(f"a vertex over the top book at y {x[over, 1].min():.5f}")
if not low < -0.025: bad.append(f"the sheet did not fall past the top book (lowest y {low:.4f})")
print(f"lowest vertex y {low:.4f}; over the top book min y {x[over, 1].min():.5f}")
if bad: print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# ---- projectile_sheet: the defaults (bounce), then the seed's s0 taken literally
run shot -scene projectile_sheet -frames 23 -threads 1 -monitor
head -1 "$TMP/shot.log" | grep -q "^pbng: projectile_sheet, 603 nodes" && ok || fail "shot header: $(head -1 "$TMP/shot.log")"
head -1 "$TMP/shot.log" | grep -q "sissm, peridynamic sheet stretching s0 1.31148e+06, k_b 6557.38, xi 0.0061, h 0.0061, dynamic" && ok \
  || fail "shot: the seed's material: $(head -1 "$TMP/shot.log")"
contact_seen shot
thickness shot
# the independent checker's residuals and energies (frame 0 carries the initial velocity for frame 1's inertia)
"$PY" "$HERE/check_output.py" "$TMP/shot.h5" --quiet && ok || fail "shot: check_output"
# the shell's centroid velocity from consecutive frames: 15 m/s at the start (the shell's SHELL nodes at rest in
# frame 0, the fixed nodes the sheet's top edge), then (WANT) reversed or slower
shell_check() { # NAME WANT SHELL
  "$PY" - "$TMP/$1.h5" "$2" "$3" <<'EOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
want, nshell = sys.argv[2], int(sys.argv[3])
X = f["mesh/rest_positions"][...]
shell = X[:, 2] < -0.01
fixed = np.zeros(len(X), bool)
fixed[np.asarray(f["mesh/fixed_nodes"][...], dtype=np.int64)] = True
bad = []
if shell.sum() != nshell: bad.append(f"{shell.sum()} shell nodes, expected {nshell}")
if not np.array_equal(fixed, np.abs(X[:, 1] - 0.5) < 1e-12): bad.append(f"the fixed nodes ({fixed.sum()}) are not the sheet's top edge")
frames = sorted(f["frames"])
t = np.array([float(f["frames"][n].attrs["time"]) for n in frames])
c = np.array([f["frames"][n]["positions"][...][shell].mean(axis=0) for n in frames])
v = np.diff(c[:, 2]) / np.diff(t)
x0 = f["frames"][frames[0]]["positions"][...]
if np.abs(x0 - X).max() > 1e-12: bad.append(f"frame 0 is not the rest shape ({np.abs(x0 - X).max():.3e})")
if abs(v[0] - 15) > 1e-6: bad.append(f"the shell starts at {v[0]:.6f} m/s, expected 15")
vmin = v.min()
print(f"shell centroid velocity: start {v[0]:.3f}, least {vmin:.3f}, last {v[-1]:.3f} m/s")
if want == "reverse" and not vmin < -0.5: bad.append(f"the shell's velocity did not reverse (least {vmin:.3f} m/s)")
if want == "slower" and not v[-1] < 14.95: bad.append(f"the shell did not slow (last {v[-1]:.3f} m/s)")
if bad: print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
}
# measured: 15 m/s until frame 3, then 14.99 ... 0.458 at frame 21, -0.415 and -1.343 at frames 22 and 23
shell_check shot reverse 162 && ok || fail "shot: the shell bounces off"

# ---- the contact step's kept candidate list and its stages (issue 43): 12 frames (pairs within reach from frame 3, gradient
# steps in every projection from then on) equal, bitwise, the same run with a fresh broad phase for every stage's pairs
# and every distance computed (-pd_contact_fresh_pairs: no box test, boxes_beyond, and no list distances kept); the
# comparison can fail: -pd_contact_eps 0.11 instead of 0.1 gives other positions (and a box test at 0.8 of its radius
# failed it from frame 3 on, 6.9e-6 relative)
run kept -scene projectile_sheet -frames 12 -threads 1 -monitor
run fresh -scene projectile_sheet -frames 12 -threads 1 -pd_contact_fresh_pairs -monitor
run eps -scene projectile_sheet -frames 12 -threads 1 -pd_contact_eps 0.11
grep -qE "contact pairs [1-9][0-9]* clamped [0-9]+ reverted [0-9]+ steps [1-9]" "$TMP/kept.log" && ok || fail "kept: no gradient step with pairs within reach"
check kept --compare "$TMP/fresh.h5" --rtol 0
# and so are -monitor's contact figures (pairs within reach, clamps, reverts, steps, the smallest distance: computed at the
# result before z_prev moves to it; computed after, the list's bounds from the moved z_prev printed min_distance inf at
# frame 3's first iteration, where the fresh run's is 2.750e-02)
figures() { grep -o "contact pairs .* min_distance [^ ]*" "$TMP/$1.log"; }
[ -n "$(figures kept)" ] && [ "$(figures kept)" = "$(figures fresh)" ] && ok \
  || fail "kept: -monitor's contact figures differ from the fresh broad phase's: $(diff <(figures kept) <(figures fresh) | head -3)"
"$PY" "$HERE/check_output.py" "$TMP/kept.h5" --quiet --compare "$TMP/eps.h5" --rtol 0 > /dev/null && fail "kept: -pd_contact_eps 0.11 gave the same positions" || ok

# ---- projectile_sheet with a rest exclusion larger than the scene, on 3 ranks: pairs of different bodies are
# never left out (the bodies still meet the barrier: -monitor shows pairs), and the contact step's surface halo
# (pairs across ranks, no rank holding the whole surface) gives the 1-rank default run's first 6 frames (the shell
# against the sheet from frame 3; in 6 frames no pair of one body comes near, so the exclusion changes nothing:
# 1 rank with -pd_contact_rest_exclusion 10 gives them bitwise). Measured: 1.1e-19 (frame 5) relative, round-off of
# the owners' sums; the thickness of these frames is the default run's (check_thickness above, with the smaller
# exclusion: a superset of the pairs)
mpi 3 "$PBNG" -scene projectile_sheet -frames 6 -threads 1 -monitor -pd_contact_rest_exclusion 10 -output "$TMP/shot_rx3.h5" > "$TMP/shot_rx3.log" 2>&1 && ok \
  || { fail "projectile on 3 ranks"; tail -5 "$TMP/shot_rx3.log"; }
contact_seen shot_rx3
"$PY" - "$TMP/shot_rx3.h5" "$TMP/shot.h5" <<'EOF' && ok || fail "projectile: 3 ranks with -pd_contact_rest_exclusion 10 != 1 rank (3e-19)"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
names = sorted(a["frames"])
d = max(np.abs(a["frames"][k]["positions"][()] - b["frames"][k]["positions"][()]).max() / np.abs(b["frames"][k]["positions"][()]).max() for k in names)
print(f"3 ranks vs 1 rank, frames 0..{len(names) - 1}: {d:.3e} (relative)")
sys.exit(0 if len(names) == 7 and d <= 3e-19 else 1)
EOF
"$PY" - "$TMP/shot_rx3.log" <<'EOF' && ok || fail "projectile on 3 ranks: a rank held the whole surface, or no halo figure"
import re, sys
h = [(int(a), int(b)) for a, b in re.findall(r"contact pairs [1-9][0-9]* .* halo ([0-9]+)/([0-9]+)", open(sys.argv[1]).read())]
print(f"halo: largest rank's share {max(a for a, _ in h)} of {h[0][1]} surface vertices" if h else "no halo figures")
sys.exit(0 if h and all(a < b for a, b in h) else 1)
EOF

# measured: 15 m/s until frame 3, 14.999, 14.997, 14.977, 14.880 at frame 7
run soft -scene projectile_sheet -frames 7 -iters 10 -pd_s0 8000 -pd_kb 40 -threads 1 -monitor
head -1 "$TMP/soft.log" | grep -q "sissm, peridynamic sheet stretching s0 8000, k_b 40, xi 0.0061, h 0.0061, dynamic" && ok \
  || fail "soft: the seed's material: $(head -1 "$TMP/soft.log")"
contact_seen soft
thickness soft
shell_check soft slower 162 && ok || fail "soft: the shell slows"

# ---- sizes and misuse
# -scale 2: 41 x 41 + the level-3 icosphere; one frame: the shell's 642 nodes leave at 15 m/s (a free body not yet
# touching the sheet: its centroid moves by dt v whatever the iterations), the sheet's top edge (41 nodes) fixed
run scaled -scene projectile_sheet -scale 2 -frames 1 -iters 2 -threads 1
head -1 "$TMP/scaled.log" | grep -q "^pbng: projectile_sheet, 2323 nodes" && ok || fail "-scale 2: $(head -1 "$TMP/scaled.log")"
shell_check scaled start 642 && ok || fail "-scale 2: the shell's nodes, their start, the fixed top edge"
expect_error "-res on cloth_on_table" "use -scale" "$PBNG" -scene cloth_on_table -res 5 -frames 1 -output "$TMP/bad.h5"
expect_error "-res on projectile_sheet" "use -scale" "$PBNG" -scene projectile_sheet -res 5 -frames 1 -output "$TMP/bad.h5"
finish
