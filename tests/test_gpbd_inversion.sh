#!/usr/bin/env bash
# -solver gpbd from inverted and flat starts (issue 43 item 2; docs/gpbd_solver.md#inversion). The seed (Sec. 4.1,
# Sec. 5.3 and Fig. 7) claims recovery from "highly degraded initializations" with the log barrier: an element is a
# non-inversion constraint, projected in the PBD manner, plus its energy. On two small meshes (a clamped block under
# gravity, block_drop_dynamic -res 4, and a free cube, box -res 4), both forms, both models (neohookean and the seed's
# Eq. 20, neohookean_log), mirrored and flattened starts, 20 frames at the scene's sweep count (40):
#  - no element inverted or flat at the end of any frame from frame 3 on (the runs recover within two frames and stay
#    recovered), and none at the end;
#  - the seed's rule alone (-gpbd_uninvert_passes 0: the projection only before each element's own update) leaves
#    elements inverted at the end of frames after the second in some of these runs (measured: the clamped block, Jacobi,
#    both models; the free cube, Jacobi): the check above can fail, and does on the code before the passes;
#  - a log-barrier run from an inverted start does not stop at iteration 0: its energy there is +inf, its residual
#    finite (the stress's guard below J_min), every frame runs its 40 sweeps and the status is complete;
#  - a real divergence from a flat start is still stopped (the seed's Flatten set-up, nu 0.4995 and 2 sweeps);
#  - the joint projection of the tetrahedra the passes leave inverted (-gpbd_uninvert_joint) clears the folded clusters
#    that per-element passes cannot: block_drop_dynamic -res 10, Jacobi, log barrier, mirrored start, none inverted at
#    the end of frames 1-3, where without it (-gpbd_uninvert_joint 0) frame 1 ends with 2 inverted (measured);
#  - the body lift (-gpbd_uninvert_body 1) turns a mirrored free cube (box -res 8) back as one body: none inverted at the
#    end of frames 1-2, where without it a patchwork of ~900 of 2058 stays (measured 907, 915);
#  - the passes, the joint projection and the lift keep results independent of ranks and threads (1x1 = 2x2 and 3x1,
#    bitwise);
#  - misuse of -gpbd_uninvert_passes and -gpbd_uninvert_joint is a clear error.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

drop=(-scene block_drop_dynamic -res 4 -frames 20 -threads 1 -solver gpbd)
cube=(-scene box -res 4 -mode dynamic -dt 0.01 -frames 20 -iters 40 -threads 1 -solver gpbd)
for mesh in drop cube; do
  declare -n args="$mesh"
  for start in inverted flat; do
    for form in gs jacobi; do
      for model in neohookean neohookean_log; do
        run "${mesh}_${start}_${form}_${model}" "${args[@]}" -gpbd_form "$form" -material "$model" -initial_state "$start"
      done
    done
  done
  for model in neohookean neohookean_log; do # the seed's rule, for the comparison
    run "${mesh}_seed_${model}" "${args[@]}" -gpbd_form jacobi -material "$model" -initial_state inverted -gpbd_uninvert_passes 0
  done
done

# inverted or flat elements (det F <= 0; NaN positions: all) at the end of each frame, every run against its expectation
"$PY" - "$TMP" <<'PYEOF' && ok || fail "inverted and flat starts: see the counts above"
import sys, glob, os, h5py, numpy as np
def inverted(f, frame, t):
    x = f["frames"][frame]["positions"][()]
    if not np.isfinite(x).all():
        return len(t)
    e1, e2, e3 = (x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3))
    return int((np.einsum("ij,ij->i", np.cross(e1, e2), e3) <= 0).sum())
bad = 0
for path in sorted(glob.glob(f"{sys.argv[1]}/*.h5")):
    name = os.path.basename(path)[:-3]
    with h5py.File(path, "r") as f:
        t = f["mesh/tetrahedra"][()]
        frames = sorted(f["frames"])
        counts = [inverted(f, fr, t) for fr in frames]
    later = counts[3:]  # frames 3..20
    if "_seed_" in name:
        continue
    good = len(frames) == 21 and counts[0] > 0 and max(later) == 0
    bad += not good
    print(f"{name}: inverted per frame {counts}{'' if good else ' (expected > 0 at frame 0, 0 from frame 3 on)'}")
# the seed's rule: some run leaves elements inverted after frame 2 (measured, frames 3..: drop neohookean 4 4 3 3 3 1 2 4
# 0 2 3 4 3 2 then 0; drop neohookean_log 2 1 2 1 2 2 3 then 0; cube neohookean 5 4 then 0; cube neohookean_log 4 4 4 3
# 2 4 3 3 6 then 0): the check above can fail
left = {}
for path in sorted(glob.glob(f"{sys.argv[1]}/*_seed_*.h5")):
    with h5py.File(path, "r") as f:
        t = f["mesh/tetrahedra"][()]
        left[os.path.basename(path)[:-3]] = [inverted(f, fr, t) for fr in sorted(f["frames"])][3:]
print("the seed's rule alone, inverted per frame from frame 3:", left)
if sum(max(c) for c in left.values()) == 0:
    print("the seed's rule alone recovered as well: the check of the passes cannot fail here")
    bad += 1
sys.exit(1 if bad else 0)
PYEOF

# the log barrier from an inverted start: energy +inf at iteration 0, the frame runs on (no divergence)
run log_monitor -scene block_drop_dynamic -res 4 -frames 2 -threads 1 -solver gpbd -gpbd_form gs -material neohookean_log \
  -initial_state inverted -monitor
grep -q "frame 1 iter    0 .*energy inf" "$TMP/log_monitor.log" && ok || fail "log barrier, inverted start: iteration 0 should show energy inf"
grep -q "frame 1 iter   40 " "$TMP/log_monitor.log" && ok || fail "log barrier, inverted start: the first frame should run its 40 sweeps"
grep -q "frame 2 iter   40 " "$TMP/log_monitor.log" && ok || fail "log barrier, inverted start: the second frame should run its 40 sweeps"
grep -q "inverted [1-9][0-9]* -> " "$TMP/log_monitor.log" && ok || fail "log barrier, inverted start: -monitor should count the inverted elements"
"$PY" -c "import h5py,sys; s=h5py.File(sys.argv[1],'r').attrs['status']; sys.exit(0 if (s.decode() if isinstance(s,bytes) else s)=='complete' else 1)" \
  "$TMP/log_monitor.h5" && ok || fail "log barrier, inverted start: the output's status should be complete"

# a real divergence from a flat start is still stopped: the seed's Flatten set-up (nu 0.4995, dt 0.01, 2 sweeps, i_N 6) on
# a 4^3 cube with the passes alone (measured: residual 8e8 after frame 1, 1e28 in frame 2 with the inverted count
# rising, 136 -> 205, so the recovery rule of the divergence check does not hold the ratio; main stops it too; with the
# joint projection the run goes on, every frame ending with none inverted: docs/gpbd_solver.md#inversion)
rc=0
"$PBNG" -scene box -res 5 -tet_split six -mode dynamic -dt 0.01 -poisson 0.4995 -frames 5 -iters 2 -rtol 0 -gpbd_newton_max 6 \
  -threads 1 -solver gpbd -gpbd_form gs -initial_state flat -gpbd_uninvert_joint 0 -output "$TMP/flatten.h5" > "$TMP/flatten.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "the solution diverged" "$TMP/flatten.log" && ok || fail "the flattened cube at nu 0.4995 should be stopped as diverged (rc $rc)"

# the joint projection and the body lift: frame-end counts with and without them
count_frames() { # inverted or flat tetrahedra at the end of each frame of $1
  "$PY" - "$1" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    t = f["mesh/tetrahedra"][()]
    counts = []
    for fr in sorted(f["frames"], key=int):
        x = f["frames"][fr]["positions"][()]
        e1, e2, e3 = (x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3))
        counts.append(len(t) if not np.isfinite(x).all() else int((np.einsum("ij,ij->i", np.cross(e1, e2), e3) <= 0).sum()))
print(" ".join(map(str, counts)))
PYEOF
}
fold=(-scene block_drop_dynamic -res 10 -frames 3 -threads 1 -solver gpbd -gpbd_form jacobi -material neohookean_log -initial_state inverted)
run fold_joint "${fold[@]}"
run fold_passes "${fold[@]}" -gpbd_uninvert_joint 0
with_joint=$(count_frames "$TMP/fold_joint.h5") passes_alone=$(count_frames "$TMP/fold_passes.h5")
echo "folds, inverted per frame: with the joint projection $with_joint, passes alone $passes_alone"
[ "${with_joint#* }" = "0 0 0" ] && ok || fail "the joint projection should leave no tetrahedron inverted at the end of frames 1-3 (got $with_joint)"
[ "${passes_alone#* }" != "0 0 0" ] && ok || fail "the passes alone recovered as well: the check of the joint projection cannot fail here"
mirror=(-scene box -res 8 -tet_split six -mode dynamic -dt 0.01 -frames 2 -threads 1 -solver gpbd -gpbd_form gs -initial_state inverted -gpbd_uninvert_joint 100)
run mirror_lift "${mirror[@]}" -gpbd_uninvert_body 1
run mirror_patch "${mirror[@]}"
with_lift=$(count_frames "$TMP/mirror_lift.h5") without_lift=$(count_frames "$TMP/mirror_patch.h5")
echo "mirrored free cube, inverted per frame: with the body lift $with_lift, without $without_lift"
[ "${with_lift#* }" = "0 0" ] && ok || fail "the body lift should leave no tetrahedron inverted at the end of frames 1-2 (got $with_lift)"
[ "${without_lift#* }" != "0 0" ] && ok || fail "the mirrored cube recovered without the lift: the check of the lift cannot fail here"

# ranks and threads: the passes project over the constraint colors, as the Gauss-Seidel form does; the joint projection
# (res 5, mirrored: it runs in both forms) and the lift (flat start, -gpbd_uninvert_joint 20) gather the same data on
# every partition
for form in gs jacobi; do
 for case in joint lift; do
  ri=(-scene block_drop_dynamic -res 5 -frames 2 -solver gpbd -gpbd_form "$form" -material neohookean_log)
  [ "$case" = joint ] && ri+=(-initial_state inverted) || ri+=(-initial_state flat -gpbd_uninvert_body 1 -gpbd_uninvert_joint 20)
  "$PBNG" "${ri[@]}" -threads 1 -output "$TMP/ri_$form$case.1x1.h5" > "$TMP/ri_$form$case.1x1.log" 2>&1 && ok || { fail "$form $case 1x1"; cat "$TMP/ri_$form$case.1x1.log"; }
  for rt in 2x2 3x1; do
    mpi "${rt%x*}" "$PBNG" "${ri[@]}" -threads "${rt#*x}" -output "$TMP/ri_$form$case.$rt.h5" > "$TMP/ri_$form$case.$rt.log" 2>&1 && ok || { fail "$form $case $rt"; cat "$TMP/ri_$form$case.$rt.log"; }
    "$PY" - "$TMP/ri_$form$case.$rt.h5" "$TMP/ri_$form$case.1x1.h5" <<'PYEOF' && ok || fail "$form $case $rt: positions differ from 1x1"
import sys, h5py, numpy as np  # bitwise (the checker's --compare also checks the physics, which has no value at an inverted frame 0)
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
ok = sorted(a["frames"]) == sorted(b["frames"]) and all(np.array_equal(a["frames"][k]["positions"][()], b["frames"][k]["positions"][()]) for k in a["frames"])
sys.exit(0 if ok else 1)
PYEOF
  done
 done
done

# a frame continued from a checkpoint is judged as the uninterrupted frame: stopped after its only iteration, which left
# fewer inverted than before (2767 -> 1444) at a relative residual of 1.7e3, the restarted run must not judge that
# residual against -divergence_limit 100 either (the code before the checkpoint kept the judgement state stopped the
# restarted run as diverged, measured)
rr=(-scene block_drop_dynamic -res 10 -frames 2 -iters 1 -threads 1 -solver gpbd -gpbd_form jacobi -material neohookean_log
    -initial_state inverted -gpbd_uninvert_joint 0 -divergence_limit 100)
"$PBNG" "${rr[@]}" -output "$TMP/rr.full.h5" > "$TMP/rr.full.log" 2>&1 && ok || { fail "recovering frame, uninterrupted"; cat "$TMP/rr.full.log"; }
rc=0; "$PBNG" "${rr[@]}" -output "$TMP/rr.h5" -test_signal_after 1 > "$TMP/rr.1.log" 2>&1 || rc=$?
[ "$rc" = 85 ] && ok || { fail "recovering frame: the stopped run exited $rc, not 85"; cat "$TMP/rr.1.log"; }
"$PBNG" "${rr[@]}" -output "$TMP/rr.h5" -restart auto > "$TMP/rr.2.log" 2>&1 && ok || { fail "recovering frame: restart"; cat "$TMP/rr.2.log"; }
grep -q "frame 1 after 1 of its iterations" "$TMP/rr.2.log" && ok || fail "recovering frame: not continued mid-frame"
"$PY" - "$TMP/rr.h5" "$TMP/rr.full.h5" <<'PYEOF' && ok || fail "recovering frame: the restarted run differs from the uninterrupted one"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
sys.exit(0 if sorted(a["frames"]) == sorted(b["frames"]) and all(np.array_equal(a["frames"][k]["positions"][()], b["frames"][k]["positions"][()]) for k in a["frames"]) else 1)
PYEOF

# misuse
expect_error "negative passes" "-gpbd_uninvert_passes -1: must be >= 0" "$PBNG" "${drop[@]}" -frames 1 -gpbd_uninvert_passes -1 -output "$TMP/bad.h5"
expect_error "negative joint limit" "-gpbd_uninvert_joint -1: must be >= 0" "$PBNG" "${drop[@]}" -frames 1 -gpbd_uninvert_joint -1 -output "$TMP/bad.h5"
expect_error "negative joint steps" "-gpbd_uninvert_joint_steps -1: must be >= 0" "$PBNG" "${drop[@]}" -frames 1 -gpbd_uninvert_joint_steps -1 -output "$TMP/bad.h5"
expect_error "passes without gpbd" "are for -solver gpbd" "$PBNG" -scene block_drop_dynamic -res 4 -frames 1 -gpbd_uninvert_passes 3 -output "$TMP/bad.h5"
finish
