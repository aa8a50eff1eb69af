#!/usr/bin/env bash
# Sheets in contact (issue 18 with issue 17's contacts; docs/cloth.md#sheets-in-contact):
#  - a trampoline (tests/make_trampoline.py: a block of tetrahedra dropped 0.04 onto a sheet held at its
#    rim, unilateral contacts): the block's vertices meet the sheet's triangles from one side and the
#    sheet's vertices the block's bottom face; the contact thickness h the run uses (root attribute and log
#    line) is the default, half of half the mean surface edge, recomputed here from the mesh and equal to the
#    closed form (2 + sqrt 2)/120 (every surface triangle is right isosceles with legs 0.1); Newton (to
#    -rtol 1e-10): no surface vertex ever comes closer to the sheet than h less 3x the measured intrusion
#    (check_output.py --min-sheet-gap, from the positions alone), and the block rides the sheet down below
#    the sheet's rest plane; without contacts the same check fails (the block falls through: the check can
#    fail); PBNG (60 sweeps per frame) keeps the gap too (PBNG against Newton and ranks x threads:
#    tests/test_sheet_contact_ranks.sh, labelled numerics);
#  - cloth_drape on a sphere and on a table (obstacles met by the sheet's vertices): no node beyond an
#    obstacle deeper than a measured bound, the sheet wraps the sphere (its lowest point below the sphere's
#    centre) and hangs over the table edge while the part on it stays on its top;
#  - errors: a thickness not below the contact distance, -drape with another scene, an unknown -drape.
# Bounds: at most ~3x the value measured (1 rank x 1 thread; 2026-11-27).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# py-expression over the last frame's positions x (and rest X) of a result: exits 0 when it holds
holds() { # FILE EXPR
  "$PY" -c 'import h5py, sys, numpy as np
h = h5py.File(sys.argv[1], "r")
x = h["frames/" + sorted(h["frames"])[-1] + "/positions"][()]
X = h["mesh/rest_positions"][()]
frames = [h["frames/" + k + "/positions"][()] for k in sorted(h["frames"])]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

"$PY" "$HERE/make_trampoline.py" "$TMP/trampoline.msh" && ok || fail "make_trampoline.py"
tramp=(-mesh "$TMP/trampoline.msh" -fix_group rim -gravity 0,-9.8,0 -mode dynamic -dt 0.01 -frames 14 -contact_model unilateral -contact_stiffness 1e4)
# h = 0.0284518; measured: closest vertex 0.028294 from the sheet (1.6e-4 inside h: bound h - 4.5e-4 = 0.0280),
# relative residual 7.0e-11 (-rtol 1e-10), no vertex inside another body
run tramp_newton "${tramp[@]}" -solver newton -rtol 1e-10
check tramp_newton --max-relative-residual 1e-10 --min-sheet-gap 0.0280 --max-penetration 1e-12
# the contact thickness: half of the default contact distance, half the mean edge of the surface triangles at
# rest (the block's boundary faces, each sheet triangle on both sides), from the mesh in the file
"$PY" - "$TMP/tramp_newton.h5" "$TMP/tramp_newton.log" <<'PYEOF' && ok || fail "the contact thickness is not the default one"
import sys, re, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
X, el, kind = f["mesh/rest_positions"][()], f["mesh/elements"][()], f["mesh/element_types"][()]
tets, tris = el[kind == 4], el[kind == 2][:, :3]                      # Gmsh types: 4 tetrahedron, 2 triangle
faces = np.sort(np.concatenate([tets[:, [0, 1, 2]], tets[:, [0, 1, 3]], tets[:, [0, 2, 3]], tets[:, [1, 2, 3]]]), axis=1)
u, count = np.unique(faces, axis=0, return_counts=True)
boundary = u[count == 1]
assert len(boundary) == 6 * 9 * 2 and len(tris) == 200, (len(boundary), len(tris))  # a 3x3x3 block's faces, a 10x10 sheet
surface = np.concatenate([boundary, tris, tris])
h = np.linalg.norm(X[surface] - X[np.roll(surface, 1, axis=1)], axis=2).mean() / 4
closed = (2 + np.sqrt(2)) / 120
stored = float(np.ravel(f.attrs["contact_thickness"])[0])
logged = float(re.search(r"sheets: kept ([0-9.e+-]+) from them", open(sys.argv[2]).read()).group(1))
print(f"contact thickness {stored!r}: from the mesh {h!r}, closed form {closed!r}, logged {logged}")
assert abs(h - closed) < 6e-16 and abs(stored - h) < 6e-16 and abs(logged - h) < 1e-6 * h  # round-off: measured 3e-18, 1.9e-16
PYEOF
# the sheet's nodes are 0..120, the block's 121..: the block went below y = 0 (measured -0.043), carried by the sheet
holds "$TMP/tramp_newton.h5" "x[121:, 1].min() < -0.03 and all(f[121:, 1].min() > f[:121, 1].min() for f in frames)" && ok \
  || fail "trampoline: the block did not ride the sheet down"
# without contacts the block falls through the sheet (closest 1.2e-3 at frame 13): the same check fails;
# the run itself reaches -rtol 1e-10 (measured 9.0e-11)
"$PBNG" -mesh "$TMP/trampoline.msh" -fix_group rim -gravity 0,-9.8,0 -mode dynamic -dt 0.01 -frames 14 -solver newton -rtol 1e-10 \
  -output "$TMP/through.h5" > "$TMP/through.log" 2>&1 && ok || fail "trampoline without contacts"
check through --max-relative-residual 1e-10
if "$PY" "$HERE/check_output.py" "$TMP/through.h5" --quiet --min-sheet-gap 0.0280 > /dev/null 2>&1; then
  fail "--min-sheet-gap passed a block falling through the sheet"
else ok; fi
# PBNG's node steps and joint contact step with sheet contacts (60 Chebyshev sweeps per frame: not converged,
# still kept off the sheet; measured closest 0.028370, 8.2e-5 inside h: bound h - 2.5e-4)
run tramp_pbng "${tramp[@]}" -accel chebyshev -iters 60
check tramp_pbng --min-sheet-gap 0.0282

# cloth_drape on the obstacles (h = 0.0285 too). Measured: the sphere, deepest node 2.8e-4 inside it (frame 28),
# the sheet's vertices at least 0.069 from its triangles, lowest point -0.605; the table, deepest 3.0e-5
# below its top (frame 35), lowest point -0.788, the part on it 2.2e-6 below its top at frame 40
run sphere -scene cloth_drape -res 11 -frames 40 -solver pbng  # PBNG's 100 sweeps a frame (the scene's default is Newton)
check sphere --max-penetration 8.5e-4 --min-sheet-gap 0.023
holds "$TMP/sphere.h5" "x[:, 1].min() < -0.35" && ok || fail "cloth_drape: the sheet does not wrap the sphere (centre y = -0.3)"
run table -scene cloth_drape -drape table -res 11 -frames 40 -solver pbng
check table --max-penetration 9e-5
holds "$TMP/table.h5" "x[:, 1].min() < -0.5 and x[x[:, 0] < 0.45, 1].min() > -0.050007" && ok || fail "cloth_drape -drape table: not hanging over the edge"

# errors
expect_error "thickness not below the distance" "-contact_thickness 0.1: must be below the contact distance 0.05" \
  "$PBNG" -scene cloth_drape -res 11 -contact_distance 0.05 -contact_thickness 0.1 -frames 1 -output "$TMP/bad.h5"
expect_error "negative thickness" "-contact_thickness -0.5: must be >= 0" "$PBNG" -scene cloth_drape -res 5 -contact_thickness -0.5 -output "$TMP/bad.h5"
expect_error "-drape with another scene" "-drape is for -scene cloth_drape" "$PBNG" -scene cloth_stretch -drape sphere -output "$TMP/bad.h5"
expect_error "unknown -drape" "-drape: unknown \"floor\" (known: sphere, table, corners)" "$PBNG" -scene cloth_drape -drape floor -output "$TMP/bad.h5"
finish
