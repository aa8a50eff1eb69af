#!/usr/bin/env bash
# The bar_fold scene (self-contact; docs/contact.md#scenes): a bar clamped at one end whose other end face
# turns upside down onto it and is held:
#  - self-contacts occur: in each of the last 30 frames the output's contact tables hold triangle contacts whose
#    vertex lies in one half of the bar (rest x < L/2) and whose triangle in the other, and in_contact
#    marks their nodes;
#  - the independent checker recomputes the frames' residuals and energies with the contacts, and finds
#    no surface vertex deeper than half the contact distance inside another part of the bar (the winding
#    number of the bar's own surface; without -contact_self the fold passes 0.3 deep: checked too, so
#    that the check can fail);
#  - 1 rank and 2 ranks give bitwise the same frames;
#  - -bar_length with bar_fold and a negative -bcK_until stop time are errors.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
export OMPI_MCA_mpi_yield_when_idle=1 # waiting ranks yield their core: many small sweeps on shared cores otherwise spin 10x slower
fold=(-scene bar_fold -frames 240 -threads 1) # the end lands at t ~ 1.9; held from t = 2
run_on_ranks fold "1 2" "${fold[@]}"
"$PY" "$HERE/check_output.py" "$TMP/fold.2.h5" --compare "$TMP/fold.1.h5" --rtol 0 --quiet && ok || fail "2 ranks != 1 rank"
d=$(sed -n 's/^contacts: distance \([0-9.e+-]*\),.*/\1/p' "$TMP/fold.1.log")
half=$("$PY" -c "print($d / 2)")
"$PY" "$HERE/check_output.py" "$TMP/fold.1.h5" --max-self-penetration "$half" && ok || fail "independent check (self-penetration below $half)"
"$PY" - "$TMP/fold.1.h5" <<'PYEOF' && ok || fail "self-contacts in the output"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
X = f["mesh/rest_positions"][:]
half = X[:, 0] < X[:, 0].max() / 2
frames = sorted(f["frames"])
across = []
for k in frames[-30:]:
    c = f["frames"][k]["contacts"]
    v, o, t = c["vertex"][:].ravel(), c["obstacle"][:].ravel(), c["triangle"][:]
    corner = np.where(t >= 0, t, 0)
    rows = (o < 0) & ((half[corner] != half[v][:, None]) | (t < 0)).all(axis=1)
    across.append(int(rows.sum()))
    marked = f["frames"][k]["in_contact"][:]
    assert marked[v].all(), k
print("bar_fold: self-contacts across the halves in the last 30 frames: %d to %d" % (min(across), max(across)))
assert min(across) > 0, across
PYEOF
run_on_ranks noself 1 "${fold[@]}" -contact_self 0
"$PY" "$HERE/check_output.py" "$TMP/noself.1.h5" --max-self-penetration "$half" --quiet > "$TMP/noself.check" 2>&1 \
  && fail "without -contact_self the fold should pass through itself" || ok
expect_error "bar_fold's length is fixed" "bar_fold's motion is made for its length 8" "$PBNG" -scene bar_fold -bar_length 6 -output "$TMP/bad.h5"
expect_error "negative stop time" "the motion's stop time -1. must be >= 0" "$PBNG" -scene box -bc0_box 0,0,0,0,1,1 -bc0_until -1 -output "$TMP/bad.h5"
finish
