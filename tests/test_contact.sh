#!/usr/bin/env bash
# Contacts (issue 17; docs/contact.md): collisions as weak constraints made by each detection.
#  - two_blocks_colliding (Sec. 10.2.1), both models: the independent checker recomputes every frame's
#    residual and energy with the frame's contacts, checks that no element, weak constraint or contact
#    has two free nodes of one color (the incremental recoloring), and that no surface vertex lies deeper
#    than the contact distance inside the other block (winding numbers of its surface, not pbng's list);
#    (1 rank x 2 threads against 3 ranks x 1 thread: tests/test_contact_ranks.sh);
#  - a stop and a restart in the middle of a contact frame give bitwise the uninterrupted frames;
#  - obstacles: a box dropped into a container rests on its floor without passing it; a box hanging from
#    its top face and stretched onto a plane reaches Newton's equilibrium (unilateral contacts) with PBNG
#    (the spring's quasistatic equilibria depend on the path: it holds what touched once);
#  - the unilateral model releases a surface lifted off a plane, the paper's spring holds it;
#  - misuse is a clear error that writes nothing.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# --- two blocks driven into each other ---------------------------------------------------------------
blocks=(-scene two_blocks_colliding -res 5 -frames 66 -iters 200 -rtol 1e-8)
for model in spring unilateral; do
  run "blocks_$model" "${blocks[@]}" -contact_model "$model" -threads 2
  grep -q "contacts [1-9]" "$TMP/blocks_$model.log" && ok || fail "$model: no contact in the frame lines"
  check "blocks_$model" --max-penetration 0.142
done
"$PY" - "$TMP" <<'PYEOF' && ok || fail "contacts in the output"
import sys, h5py, numpy as np
f = h5py.File(f"{sys.argv[1]}/blocks_spring.h5", "r")
assert f.attrs["contact_model"] in (b"spring", "spring") and np.allclose(f.attrs["contact_stiffness"], [1e8, 0])
last = f["frames/000066"]
n = len(last["contacts/vertex"])
assert n > 10 and last["contacts/triangle"].shape == (n, 3) and last["in_contact"][:][last["contacts/vertex"][:]].all(), n
print("blocks: %d contacts at the end, deepest gap %.2e" % (n, last["contacts/gap"][:].min()))
PYEOF

# --- stop and restart inside a contact frame ----------------------------------------------------------
restart=(-scene two_blocks_colliding -res 5 -frames 64 -iters 10 -contact_model unilateral -threads 1)
mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/full.h5" > "$TMP/log" 2>&1 && ok || { fail "uninterrupted"; cat "$TMP/log"; }
rc=0; mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/cut.h5" -test_signal_after 605 > "$TMP/log" 2>&1 || rc=$?
[ "$rc" -eq 85 ] && ok || { fail "stop: exit $rc"; cat "$TMP/log"; }
mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/cut.h5" -restart auto > "$TMP/log" 2>&1 && ok || { fail "restart"; cat "$TMP/log"; }
check cut --compare "$TMP/full.h5" --rtol 0

# --- obstacles ----------------------------------------------------------------------------------------
run drop -scene box -res 4 -mode dynamic -dt 0.01 -frames 40 -gravity 0,-9.8,0 -youngs 3000 -obstacle "container:-0.5,-0.5,-0.5,1.5,3,1.5" -threads 2
check drop --max-penetration 1e-4
"$PY" - "$TMP/drop.h5" <<'PYEOF' && ok || fail "box in the container: not resting on the floor"
import sys, h5py
x = h5py.File(sys.argv[1], "r")["frames/000040/positions"][:]
assert abs(x[:, 1].min() + 0.5) < 1e-4, x[:, 1].min()
PYEOF
hang=(-scene box -res 4 -fix_box 0,0.99,0,1,1,1 -gravity 0,-9.8,0 -youngs 100 -obstacle "plane:0,-0.1,0,0,1,0" -contact_model unilateral -threads 2)
run hang_newton "${hang[@]}" -solver newton -iters 100 -rtol 1e-11
run hang_pbng "${hang[@]}" -iters 5000 -rtol 1e-10
check hang_pbng --compare "$TMP/hang_newton.h5" --rtol 1e-6 --max-penetration 1e-5

# --- unilateral contacts let go -----------------------------------------------------------------------
lift=(-scene box -res 4 -gravity 0,-9.8,0 -youngs 1000 -obstacle "plane:0,0,0,0,1,0" -bc0_box 0,0.99,0,1,1,1 -bc0_velocity 0,2,0 -dt 0.01
      -frames 5 -iters 3000 -rtol 1e-9 -threads 2)
run lift_spring "${lift[@]}"
run lift_unilateral "${lift[@]}" -contact_model unilateral
"$PY" "$HERE/lifted_bottom.py" "$TMP/lift_spring.h5" "$TMP/lift_unilateral.h5" && ok || fail "lifting off a plane"

# --- misuse ----------------------------------------------------------------------------------------------
err() { expect_error "$1" "$2" "$PBNG" "${@:3}" -output "$TMP/bad.h5"; }
err "unknown obstacle" "-obstacle \"cylinder:0,0,0,1\": " -scene box -obstacle "cylinder:0,0,0,1"
err "short plane" "-obstacle \"plane:0,0,0,0,1\": " -scene box -obstacle "plane:0,0,0,0,1"
err "zero normal" "-obstacle \"plane:0,0,0,0,0,0\": " -scene box -obstacle "plane:0,0,0,0,0,0"
err "negative distance" "must be >= 0 (0: half the mean surface edge)" -scene two_blocks_colliding -contact_distance -1
err "zero stiffness" "-contact_stiffness 0.: must be > 0" -scene two_blocks_colliding -contact_stiffness 0
err "unilateral with k_t" "-contact_model unilateral acts along the normal only" -scene two_blocks_colliding -contact_model unilateral \
  -contact_tangential_stiffness 10
err "unknown model" "-contact_model: unknown contact model \"sticky\"" -scene two_blocks_colliding -contact_model sticky
err "-contact 0 with options" "-contact 0 with contact options" -scene box -contact 0 -contact_distance 0.1
finish
