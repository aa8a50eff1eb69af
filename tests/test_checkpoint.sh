#!/usr/bin/env bash
# Checkpoint and restart: a run stopped by SIGUSR1/SIGTERM mid-frame writes a checkpoint and its
# partial output and exits 85; -restart continues it, and the final output equals the uninterrupted
# run's (bitwise here; the issue asks 1e-12), for PBNG (Chebyshev, quasistatic and dynamic, corotated
# warm starts), Newton, XPBD-QS, the seed's XPBD (dynamic substeps; quasistatic mid pseudo step), multilevel PBNG, sheets
# (PBNG on cloth_stretch; the continuum seed's solver on cloth_drape), the plastic state (plastic_twist, PBNG and
# Newton), on 1 and 2 ranks; -checkpoint_every checkpoints between frames,
# a hard kill after one leaves a run that -restart auto completes; bad restarts are clear errors. Each result is
# also checked independently (check_output.py) with a bound on its relative residual: the run's -rtol where it
# has one, else about 3x the measured value after its fixed iterations (written beside each case).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
mpi() { local n=$1; shift; if [ "$n" = 1 ]; then "$@"; else "$MPIEXEC" -n "$n" --oversubscribe --bind-to none "$@"; fi; }

# stop_and_restart TAG RANKS AFTER BOUND OPTIONS...: uninterrupted run, run stopped after AFTER iterations, restart;
# compare (bitwise, or to RTOL when set; the corotated warm starts of elements shared by ranks, restored from their
# owner's copy, are bitwise too since every rank's copy moves alike: before, 1e-12), and check the restarted result
# independently with relative residuals <= BOUND
stop_and_restart() {
  local tag=$1 ranks=$2 after=$3 bound=$4; shift 4
  local rc=0
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.full.h5" -summary "$TMP/$tag.full.json" > "$TMP/$tag.full.log" 2>&1 \
    || { fail "$tag: uninterrupted run"; cat "$TMP/$tag.full.log"; return; }
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -test_signal_after "$after" > "$TMP/$tag.1.log" 2>&1 || rc=$?
  [ "$rc" = 85 ] && ok || { fail "$tag: stopped run exited $rc, not 85"; cat "$TMP/$tag.1.log"; return; }
  [ -e "$TMP/$tag.h5.checkpoint.h5" ] && [ -e "$TMP/$tag.h5.partial" ] && [ ! -e "$TMP/$tag.h5" ] && ok \
    || fail "$tag: expected the checkpoint and the partial output only"
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -restart auto -summary "$TMP/$tag.json" > "$TMP/$tag.2.log" 2>&1 && ok \
    || { fail "$tag: restart"; cat "$TMP/$tag.2.log"; return; }
  "$PY" -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); k = ("frames", "iterations", "linear_iterations"); \
assert all(a[x] == b[x] for x in k), [(x, a[x], b[x]) for x in k]' "$TMP/$tag.full.json" "$TMP/$tag.json" && ok || fail "$tag: iteration counts differ"
  grep -q "^restart: .*checkpoint.h5, frame" "$TMP/$tag.2.log" && ok || fail "$tag: the restart did not say where it continues"
  "$PY" "$HERE/check_output.py" "$TMP/$tag.h5" --max-relative-residual "$bound" --compare "$TMP/$tag.full.h5" --rtol "${RTOL:-0}" --quiet && ok ||
    fail "$tag: restarted output differs, or its residual is above $bound"
  [ ! -e "$TMP/$tag.h5.checkpoint.h5" ] && ok || fail "$tag: the checkpoint of a finished run was left behind"
}

box=(-scene box_stretch_twist -res 8 -frames 4 -threads 1)
# the bound: the run's -rtol, or (fixed iterations) about 3x the largest relative residual measured
stop_and_restart pbng_cheb 1 230 1e-9 "${box[@]}" -accel chebyshev -iters 2000 -rtol 1e-9
stop_and_restart pbng_sor_2 2 150 2.8e-4 "${box[@]}" -accel sor -iters 60 -rtol 0 -material corotated # measured 9.4e-5
stop_and_restart newton_2 2 3 1e-9 "${box[@]}" -solver newton -iters 20 -rtol 1e-9 -frames 3
stop_and_restart dynamic_2 2 45 0.25 -scene block_drop_dynamic -res 6 -frames 5 -iters 20 -threads 1               # measured 8.3e-2
stop_and_restart xpbd_qs 1 33 3 -scene two_blocks_hanging -res 4 -solver xpbd_qs -xpbd_qs_substeps 4 -iters 50 -rtol 0 -frames 2 # 0.98
# (XPBD lowers its constraints' residual, not the true one: measured 41 in the first frame)
stop_and_restart xpbd_2 2 25 120 -scene block_drop_dynamic -res 5 -solver xpbd -frames 3 -iters 15 -threads 1
stop_and_restart xpbd_ho_dynamic_2 2 13 1.1 -scene block_drop_dynamic -element tet10 -res 3 -solver xpbd_ho -xpbd_ho_substeps 8 -frames 3 -threads 1 # 0.37
stop_and_restart mixed_kinds_2 2 40 0.6 -mesh "$PBNG_TEST_DATA/mixed_box_v41_binary.msh" -fix_group left -gravity 0,0,-9.8 -youngs 2e5 -accel sor -iters 30 -rtol 0 -frames 3 -threads 1 # 0.21
stop_and_restart continuum_pbd_sheet_2 2 23 0.8 -scene cloth_drape -drape corners -res 7 -solver continuum_pbd -frames 3 -iters 10 -threads 1 # 0.26
stop_and_restart pbng_sheet 1 37 9e-2 -scene cloth_stretch -res 7 -frames 2 -iters 30 -rtol 0 -accel chebyshev    # measured 3.2e-2
stop_and_restart xpbd_sheet_2 2 22 2.5 -scene cloth_drape -drape corners -res 7 -solver xpbd -frames 3 -iters 15 -threads 1 # 0.84
stop_and_restart xpbd_ho_qs 1 19 2.5 -scene bar_gravity -element hex8 -res 3 -solver xpbd_ho -xpbd_ho_iterations 3 -iters 30 -rtol 0 -frames 2 -threads 1 # 0.96
# (plastic_twist at res 4: 208 nodes; plastic flow from frame 2 on; the stops fall in frame 3)
stop_and_restart plastic_pbng_2 2 580 1e-8 -scene plastic_twist -res 4 -solver pbng -frames 4 -threads 1       # the scene's -rtol 1e-8
stop_and_restart plastic_newton 1 25 1e-8 -scene plastic_twist -res 4 -frames 3
stop_and_restart multilevel_2 2 7 1e-9 "${box[@]}" -multilevel 2 -iters 30 -rtol 1e-9
# the coarsest matrix kept over 3 cycles: the stop after cycle 7 waits for cycle 9, where the next is assembled afresh
stop_and_restart multilevel_reuse 1 7 1e-9 "${box[@]}" -multilevel 2 -multilevel_coarse_reuse 3 -iters 30 -rtol 1e-9
stop_and_restart multilevel_dynamic 1 13 1.4e-7 -scene block_drop_dynamic -res 7 -frames 3 -iters 8 -multilevel 2 -threads 1 # 4.6e-8
# a stop at a frame's last iteration, and with the frame converged on a residual check
stop_and_restart last_iter 1 40 0.13 "${box[@]}" -iters 20 -rtol 0                                                # measured 4.4e-2

# -checkpoint_every: checkpoints between frames; after a hard kill (no checkpoint of its own), -restart auto
# continues from the last one and ends with the same output
ev=(-scene box_stretch_twist -res 8 -frames 6 -iters 30 -rtol 0 -threads 1 -checkpoint_every 2)
"$PBNG" "${ev[@]}" -output "$TMP/every.full.h5" > "$TMP/log" 2>&1 && ok || { fail "-checkpoint_every run"; cat "$TMP/log"; }
[ "$(grep -c '^checkpoint:' "$TMP/log")" = 2 ] && ok || { fail "-checkpoint_every 2 over 6 frames should checkpoint twice"; cat "$TMP/log"; }
rc=0
"$PBNG" "${ev[@]}" -output "$TMP/every.h5" -test_signal_after 130 > "$TMP/log" 2>&1 || rc=$?
[ "$rc" = 85 ] && ok || fail "-checkpoint_every: stopped run exited $rc"
"$PY" - "$TMP/every.h5.partial" <<'PYEOF' && ok || fail "partial output: frames up to the stop"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert f.attrs["frames_written"] == 5 and "frames/000004" in f and "frames/000005" not in f, dict(f.attrs)
PYEOF
"$PBNG" "${ev[@]}" -output "$TMP/every.h5" -restart auto > "$TMP/log" 2>&1 && ok || { fail "-restart auto"; cat "$TMP/log"; }
# (30 fixed iterations a frame: measured relative residuals up to 1.7e-2)
"$PY" "$HERE/check_output.py" "$TMP/every.h5" --max-relative-residual 5e-2 --compare "$TMP/every.full.h5" --rtol 0 --quiet && ok ||
  fail "-checkpoint_every: restarted output differs, or its residual"
# -restart auto without a checkpoint starts afresh
"$PBNG" "${box[@]}" -iters 5 -output "$TMP/fresh.h5" -restart auto > "$TMP/log" 2>&1 && ok || fail "-restart auto without a checkpoint"
grep -q "no checkpoint" "$TMP/log" && ok || fail "-restart auto: no message about starting afresh"
# its result: the default tolerance's multilevel cycles, capped at 5 (measured relative residuals up to 2.3e-4)
"$PY" "$HERE/check_output.py" "$TMP/fresh.h5" --frames 4 --max-relative-residual 7e-4 --quiet && ok || fail "-restart auto without a checkpoint: independent check"

# bad restarts: clear errors, nothing written
"$PBNG" "${box[@]}" -iters 40 -rtol 0 -output "$TMP/bad.h5" -test_signal_after 50 > /dev/null 2>&1 || true
expect_error "restart with other physics" "the run's options differ from the checkpoint's" "$PBNG" "${box[@]}" -iters 40 -rtol 0 -youngs 2e5 -output "$TMP/bad.h5" -restart auto
# the restart key holds every option that shapes the states: a boundary set's motion too (not just its name)
moving=(-bc0_box 0,0,0,0.2,1,1 -bc0_velocity 0,0.1,0)
"$PBNG" "${box[@]}" "${moving[@]}" -iters 40 -rtol 0 -output "$TMP/moving.h5" -test_signal_after 50 > /dev/null 2>&1 || true
expect_error "restart with another motion" "the run's options differ from the checkpoint's" "$PBNG" "${box[@]}" -bc0_box 0,0,0,0.2,1,1 -bc0_velocity 0,0.2,0 \
  -iters 40 -rtol 0 -output "$TMP/moving.h5" -restart auto
"$PBNG" "${box[@]}" -iters 40 -rtol 0 -output "$TMP/moving.h5" -restart auto "${moving[@]}" -monitor -threads 2 > "$TMP/log" 2>&1 && ok \
  || { fail "restart with the same options in another order, and -monitor/-threads changed"; cat "$TMP/log"; }
# its result: 40 fixed iterations a frame (measured relative residuals up to 3.8e-2)
"$PY" "$HERE/check_output.py" "$TMP/moving.h5" --frames 4 --max-relative-residual 0.11 --quiet && ok || fail "restart with the options in another order: independent check"
expect_error "restart with another mesh" "written for a mesh of 512 nodes" "$PBNG" "${box[@]}" -res 9 -iters 40 -rtol 0 -output "$TMP/bad.h5" -restart "$TMP/bad.h5.checkpoint.h5"
expect_error "restart from a missing file" "cannot open it as an HDF5 file" "$PBNG" "${box[@]}" -iters 40 -rtol 0 -output "$TMP/x.h5" -restart "$TMP/none.h5"
expect_error "restart from a result file" "not a pbng checkpoint" "$PBNG" "${box[@]}" -iters 5 -output "$TMP/y.h5" -restart "$TMP/fresh.h5"
# a checkpoint of another format (an older pbng's, whose counters this one cannot read) is named as such
cp "$TMP/bad.h5.checkpoint.h5" "$TMP/old.checkpoint.h5"
"$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); f.attrs["format"] = "pbng-checkpoint-1"' "$TMP/old.checkpoint.h5"
expect_error "restart from an older format" "written by another version of pbng (format pbng-checkpoint-1" "$PBNG" "${box[@]}" -res 9 -iters 40 -rtol 0 -output "$TMP/bad.h5" -restart "$TMP/old.checkpoint.h5"
expect_error "restart without the partial output" "cannot reopen" "$PBNG" "${box[@]}" -iters 40 -rtol 0 -output "$TMP/other.h5" -restart "$TMP/bad.h5.checkpoint.h5"
expect_error "-restart with -initial" "-restart and -initial exclude each other" "$PBNG" "${box[@]}" -output "$TMP/z.h5" -restart auto -initial "$TMP/fresh.h5"
expect_error "-checkpoint_every -1" "-checkpoint_every -1: must be >= 0" "$PBNG" "${box[@]}" -output "$TMP/z.h5" -checkpoint_every -1
[ ! -e "$TMP/z.h5" ] && [ ! -e "$TMP/other.h5" ] && ok || fail "a failed restart left output behind"
finish
