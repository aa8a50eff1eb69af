#!/usr/bin/env bash
# The contact barrier in the frame's energy (issue 43 item 3; -pd_contact_kappa; docs/peridynamics.md#the-barrier-in-the-frames-residual):
#  - a sheet held at two corners swings onto a sphere (-pd_obstacle) with -pd_contact_kappa 100: every frame ends at
#    -rtol 1e-6 (its frame line says converged and the file's relative_residual is below it), frames 10-15 with
#    vertex-obstacle pairs within the barrier's reach (-monitor), the thickness kept (check_thickness.py), and the
#    independent checker recomputes every frame's residual and energy with the barrier added over the pairs it finds
#    by brute force (check_output.py, barrier_terms) and passes at --max-relative-residual 1e-6;
#  - the checker fails copies of the file whose barrier weight is set to 0 (the barrier left out of its residual) or
#    changed by 10 % (so it can fail);
#  - the shell of projectile_sheet meets the sheet (vertex-triangle and edge-edge pairs, across the ranks on 2) with
#    -pd_contact_kappa 1000 and 300 iterations a frame: frames in contact end at -rtol, the checker passes;
#  - 2 ranks equal 1 rank to round-off (SISSM's sums; the barrier's per-node sums run over pairs in one global order;
#    both with -monitor, which checks the residual after every iteration: the same stopping iterations);
#  - a run stopped mid-frame and restarted equals the uninterrupted one bitwise (the barrier's pairs made again at the
#    restored positions);
#  - kappa < 0, -pd_contact_iterations or -pd_contact_mu with kappa > 0 and kappa without the contact step are refused.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# at_rtol NAME FRAMES: every frame line of the log says converged and every frame's relative_residual in the file is
# at most 1e-6 (the frames end at -rtol, contact included)
at_rtol() {
  [ "$(grep -c '^frame .* converged$' "$TMP/$1.log")" = "$2" ] && ! grep -q "NOT converged" "$TMP/$1.log" && ok \
    || fail "$1: not every frame converged: $(grep '^frame' "$TMP/$1.log" | grep -v ' converged$' | head -3)"
  "$PY" - "$TMP/$1.h5" "$2" <<'EOF' && ok || fail "$1: relative_residual attributes above -rtol"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
frames = sorted(f["frames"])[1:]
rel = [float(f["frames"][k].attrs["relative_residual"]) for k in frames]
conv = [int(f["frames"][k].attrs["converged"]) for k in frames]
print(f"{sys.argv[1]}: {len(frames)} frames, largest relative_residual {max(rel):.3e}")
sys.exit(0 if len(frames) == int(sys.argv[2]) and max(rel) <= 1e-6 and min(conv) == 1 else 1)
EOF
}

drape=(-scene cloth_drape -drape corners -res 11 -sheet_model peridynamic -solver sissm -sissm_chebyshev -pd_obstacle "sphere:0.5,-0.3,0.5,0.25"
  -pd_contact_kappa 100 -frames 15 -iters 2000 -rtol 1e-6)
run drape "${drape[@]}" -threads 1 -monitor
at_rtol drape 15
# pairs within reach at the end of frames 10-15 (measured: from frame 10 on)
n=$(for f in 10 11 12 13 14 15; do grep "^ *frame $f iter" "$TMP/drape.log" | tail -1; done | grep -c "contact pairs [1-9]")
[ "$n" = 6 ] && ok || fail "drape: $n of frames 10-15 end with pairs within the barrier's reach"
"$PY" "$HERE/check_thickness.py" "$TMP/drape.h5" --quiet && ok || fail "drape: check_thickness"
check drape --frames 15 --max-relative-residual 1e-6

# the checker can fail: the barrier left out (kappa 0) or mis-weighted
corrupt() { # NAME CODE: a copy of drape.h5 changed by CODE must fail with a recomputed residual of a frame in contact
  cp "$TMP/drape.h5" "$TMP/$1.h5" && sed "s/drape\.h5:/$1.h5:/g" "$TMP/drape.xdmf" > "$TMP/$1.xdmf"
  "$PY" -c "import h5py; f = h5py.File('$TMP/$1.h5', 'r+'); $2"
  out=$("$PY" "$HERE/check_output.py" "$TMP/$1.h5" 2>&1) && { fail "$1: accepted"; return; }
  grep -q "frame 000015 (peridynamic stretching/dynamic): recomputed residual" <<<"$out" && ok || fail "$1: the checker's report: $out"
}
corrupt no_barrier 'f.attrs["pd_contact_kappa"] = 0.0'
corrupt kappa_changed 'f.attrs["pd_contact_kappa"] = 1.1 * f.attrs["pd_contact_kappa"]'

# ---- two bodies: vertex-triangle and edge-edge pairs, on 1 and 2 ranks
shot=(-scene projectile_sheet -pd_contact_kappa 1000 -iters 300 -frames 8 -threads 1)
run shot "${shot[@]}" -monitor
at_rtol shot 8
grep -E "^ *frame 8 iter" "$TMP/shot.log" | tail -1 | grep -q "contact pairs [1-9]" && ok || fail "shot: no pair within reach at frame 8"
"$PY" "$HERE/check_thickness.py" "$TMP/shot.h5" --quiet && ok || fail "shot: check_thickness"
check shot --frames 8 --max-relative-residual 1e-6
mpi 2 "$PBNG" "${shot[@]}" -monitor -output "$TMP/shot2.h5" > "$TMP/shot2.log" 2>&1 && ok || { fail "shot on 2 ranks"; tail -5 "$TMP/shot2.log"; }
compare shot2 shot 0
mpi 2 "$PBNG" "${drape[@]}" -threads 1 -monitor -output "$TMP/drape2.h5" > "$TMP/drape2.log" 2>&1 && ok || { fail "drape on 2 ranks"; tail -5 "$TMP/drape2.log"; }
compare drape2 drape 0

# ---- a mid-frame checkpoint and restart: bitwise the uninterrupted run
rs=("${drape[@]}" -frames 12 -threads 1)
run rs.full "${rs[@]}"
rc=0; "$PBNG" "${rs[@]}" -output "$TMP/rs.h5" -test_signal_after 3300 > "$TMP/rs.1.log" 2>&1 || rc=$?
[ "$rc" = 85 ] && ok || fail "restart: the stopped run exited $rc, not 85"
"$PBNG" "${rs[@]}" -output "$TMP/rs.h5" -restart auto > "$TMP/rs.2.log" 2>&1 && ok || { fail "restart"; cat "$TMP/rs.2.log"; }
grep -q "frame 1[012] after [1-9][0-9]* of its iterations" "$TMP/rs.2.log" && ok || fail "restart: not mid-frame in contact: $(grep restart "$TMP/rs.2.log")"
compare rs rs.full 0

# ---- refusals
base=(-scene cloth_drape -drape corners -res 11 -sheet_model peridynamic -solver sissm -frames 1 -iters 2 -output "$TMP/bad.h5")
expect_error "kappa < 0" "must be >= 0 (0: off)" "$PBNG" "${base[@]}" -pd_contact -pd_contact_kappa -1
expect_error "kappa nan" "must be >= 0 (0: off)" "$PBNG" "${base[@]}" -pd_contact -pd_contact_kappa nan
expect_error "iterations with kappa" "-pd_contact_kappa > 0 puts the barrier in the frame's energy" "$PBNG" "${base[@]}" -pd_contact -pd_contact_kappa 1 -pd_contact_iterations 3
expect_error "mu with kappa" "-pd_contact_kappa > 0 puts the barrier in the frame's energy" "$PBNG" "${base[@]}" -pd_contact -pd_contact_kappa 1 -pd_contact_mu 2
expect_error "kappa without contact" "the contact local step is off" "$PBNG" "${base[@]}" -pd_contact_kappa 1
finish
