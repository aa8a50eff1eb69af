#!/usr/bin/env bash
# The bar_fold scene (self-contact; docs/contact.md#scenes): a bar clamped at one end whose other end face
# turns upside down onto it and is held (dt 0.02, twice the scene's: 110 frames to t = 2.2, the end landing at
# frame ~98 and held from frame 100; up to 400 sweeps a frame for the scene's -rtol 1e-6):
#  - self-contacts occur: in each of the last 10 frames the output's contact tables hold triangle contacts whose
#    vertex lies in one half of the bar (rest x < L/2) and whose triangle in the other, and in_contact
#    marks their nodes;
#  - the independent checker recomputes the frames' residuals and energies with the contacts, bounds the
#    relative residual, and finds no surface vertex deeper than a measured bound (1e-3; the contact
#    distance is 0.19) inside another part of the bar (the winding number of the bar's own surface;
#    without -contact_self the fold passes 0.3 deep from frame 100: checked on frames 97.. too, so that the
#    check can fail);
#  - 1 rank and 2 ranks give bitwise the same frames;
#  - -bar_length with bar_fold and a negative -bcK_until stop time are errors.
# Bounds: at most ~3x the value measured (2026-11-27).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
fold=(-scene bar_fold -dt 0.02 -frames 110 -iters 400 -threads 1) # the end lands at t ~ 1.95; held from t = 2
run_on_ranks fold "1 2" "${fold[@]}"
"$PY" "$HERE/check_output.py" "$TMP/fold.2.h5" --compare "$TMP/fold.1.h5" --rtol 0 --quiet && ok || fail "2 ranks != 1 rank"
# measured: deepest vertex 3.4e-4 inside another part of the bar (frame 106), relative residual 9.9e-7 (the scene's
# -rtol 1e-6, reached in at most 140 sweeps)
depth=1e-3
check fold.1 --max-self-penetration "$depth" --max-relative-residual 1e-6
"$PY" - "$TMP/fold.1.h5" <<'PYEOF' && ok || fail "self-contacts in the output"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
X = f["mesh/rest_positions"][:]
half = X[:, 0] < X[:, 0].max() / 2
frames = sorted(f["frames"])
across = []
for k in frames[-10:]:
    c = f["frames"][k]["contacts"]
    v, o, t = c["vertex"][:].ravel(), c["obstacle"][:].ravel(), c["triangle"][:]
    corner = np.where(t >= 0, t, 0)
    rows = (o < 0) & ((half[corner] != half[v][:, None]) | (t < 0)).all(axis=1)
    across.append(int(rows.sum()))
    marked = f["frames"][k]["in_contact"][:]
    assert marked[v].all(), k
print("bar_fold: self-contacts across the halves in the last 10 frames: %d to %d" % (min(across), max(across)))
assert min(across) > 0, across
PYEOF
# without self-contacts the fold passes through itself (0.3 deep): the checker's self-penetration test, on the
# frames from 97 on (where it passes through; those frames alone keep the check short), must fail
run_on_ranks noself 1 "${fold[@]}" -contact_self 0
"$PY" - "$TMP/noself.1.h5" "$HERE" "$depth" <<'PYEOF' && ok || fail "without -contact_self the fold should pass through itself"
import sys, io, contextlib, h5py
sys.path.insert(0, sys.argv[2])
import check_output as co
h5 = h5py.File(sys.argv[1], "r")
rep = co.Report()
with contextlib.redirect_stdout(io.StringIO()):  # the failure it must report, not shown as one
    mesh = co.check_mesh(rep, h5)
    frames = [(h5["frames"][k]["positions"][()], None) for k in sorted(h5["frames"])[97:]]
    depth, flagged = co.check_self_penetration(rep, mesh, frames, float(sys.argv[3]))
print(f"without -contact_self: deepest {depth:.3f} inside the bar ({flagged} vertex-frames)")
sys.exit(0 if rep.failures == 1 and depth > float(sys.argv[3]) else 1)
PYEOF
expect_error "bar_fold's length is fixed" "bar_fold's motion is made for its length 8" "$PBNG" -scene bar_fold -bar_length 6 -output "$TMP/bad.h5"
expect_error "negative stop time" "the motion's stop time -1. must be >= 0" "$PBNG" -scene box -bc0_box 0,0,0,0,1,1 -bc0_until -1 -output "$TMP/bad.h5"
finish
