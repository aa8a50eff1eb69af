#!/usr/bin/env bash
# The objects_dropping scene (paper Sec. 10.2.3; docs/contact.md#scenes), small: 20 of its objects (a full
# 4 x 4 layer and four above it) with a larger time step, until the upper ones land on the lower ones
# (the first objects reach the glass box at frame 18, the upper ones the lower ones at frame 43 of 55):
#  - 1 rank x 1 thread and 2 ranks x 1 thread give bitwise the same frames;
#  - the independent checker recomputes every frame's residual and energy with its contacts, bounds the
#    relative residual, checks the colors against the contacts, and finds no surface vertex deeper than a
#    measured bound (a quarter of the contact distance 0.077) inside another object or beyond the glass box
#    (winding numbers of each object's surface, not pbng's list);
#  - the mesh is 20 bodies, and contacts occur with the glass box and between objects (the output's
#    contact tables: an obstacle row, and a triangle row whose vertex and corners lie in different bodies);
#  - pbng-partition writes the objects' mesh and a 2-rank run reads it with the scene's glass box: the same
#    mesh and bitwise the same first frame as the generated scene's;
#  - -scale, -objects, -res and -multilevel misuse is a clear error that writes nothing.
# Bounds: at most ~3x the value measured (2026-11-27).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
small=(-scene objects_dropping -objects 20 -dt 0.01 -frames 55 -threads 1)
run_on_ranks drop "1 2" "${small[@]}"
"$PY" "$HERE/check_output.py" "$TMP/drop.2.h5" --compare "$TMP/drop.1.h5" --rtol 0 --quiet && ok || fail "2 ranks != 1 rank"
# measured: deepest vertex 5.8e-3 inside another object (frame 55), relative residual 8.8e-7 (the scene's -rtol 1e-6)
check drop.1 --max-penetration 1.7e-2 --max-relative-residual 1e-6
"$PY" - "$TMP/drop.1.h5" "$HERE" <<'PYEOF' && ok || fail "contacts with the glass box and between objects"
import sys, h5py, numpy as np
sys.path.insert(0, sys.argv[2])
from check_output import boundary_triangles  # each node's body: the connected components of the elements
f = h5py.File(sys.argv[1], "r")
_, body, _ = boundary_triangles({"tets": f["mesh/tetrahedra"][:], "X": f["mesh/rest_positions"][:]})
assert len(np.unique(body)) == 20, len(np.unique(body))
obstacle = between = 0
for k in f["frames"]:
    c = f["frames"][k].get("contacts")
    if c is None or len(c["vertex"]) == 0:
        continue
    v, o, t = c["vertex"][:].ravel(), c["obstacle"][:].ravel(), c["triangle"][:]
    obstacle += int((o >= 0).sum())
    tri = o < 0
    tt = t[tri]
    valid = tt >= 0  # -1: a corner of weight 0
    differ = (body[np.clip(tt, 0, None)] != body[v[tri]][:, None]) | ~valid
    between += int((differ.all(axis=1) & valid.any(axis=1)).sum())
last = f["frames"][sorted(f["frames"])[-1]]
print("objects_dropping: %d obstacle and %d object-object contact rows over the frames, %d in force at the end"
      % (obstacle, between, len(last["contacts/vertex"])))
assert obstacle > 0 and between > 0, (obstacle, between)
PYEOF

# --- pbng-partition writes the objects' mesh; a 2-rank run reads it with the scene's glass box -------------
"$PBNG_BIN/pbng-partition" -scene objects_dropping -objects 20 -parts 2 -output "$TMP/parts.h5" > "$TMP/parts.log" 2>&1 && ok \
  || { fail "pbng-partition"; cat "$TMP/parts.log"; }
run_on_ranks file 2 -scene objects_dropping -mesh "$TMP/parts.h5" -dt 0.01 -frames 1 -threads 1
grep -q "^20 objects (scale 1): " "$TMP/parts.log" && grep -q "1 obstacle(s)" "$TMP/file.2.log" && ok || fail "partitioned objects: mesh or glass box"
"$PY" - "$TMP/file.2.h5" "$TMP/drop.1.h5" <<'PYEOF' && ok || fail "partitioned objects: not the generated scene's mesh or first frame"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
assert np.array_equal(a["mesh/rest_positions"][()], b["mesh/rest_positions"][()])
assert np.array_equal(a["mesh/tetrahedra"][()], b["mesh/tetrahedra"][()])
assert np.array_equal(a.attrs["obstacles"], b.attrs["obstacles"])
assert np.array_equal(a["frames/000001/positions"][()], b["frames/000001/positions"][()])
PYEOF
expect_error "pbng-partition -multilevel" "have no coarse levels" "$PBNG_BIN/pbng-partition" -scene objects_dropping -multilevel 2 -parts 2 \
  -output "$TMP/bad.h5"

# --- misuse ----------------------------------------------------------------------------------------------
err() { expect_error "$1" "$2" "$PBNG" "${@:3}" -output "$TMP/bad.h5"; }
err "scale 0" "-scale 0.: must be in (0, 32]" -scene objects_dropping -scale 0
err "scale negative" "-scale -1.: must be in (0, 32]" -scene objects_dropping -scale -1
err "scale elsewhere" "-scale is for the generated objects of -scene objects_dropping" -scene box -scale 2
err "objects 0" "-objects 0: must be 1..160" -scene objects_dropping -objects 0
err "objects elsewhere" "-objects is for the generated objects" -scene two_blocks_colliding -objects 3
err "res with the objects" "-res does not size the objects of -scene objects_dropping: use -scale" -scene objects_dropping -res 8
err "multilevel with the objects" "have no coarse levels" -scene objects_dropping -multilevel 2
finish
