#!/usr/bin/env bash
# -solver gpbd (Generalized PBD, issue 19; docs/gpbd_solver.md), first increment: linear tetrahedra of pbng's
# materials and weak constraints, Jacobi and Gauss-Seidel forms, dynamic and quasistatic, distributed.
#  - the adapter of pbng's materials (tests/test_gpbd_terms.c): gradient and Hessian by central differences;
#  - dynamic: both forms converge to Newton's backward-Euler steps (to round-off in positions) on a clamped
#    block, and to each other, also with the log-barrier neo-Hookean (Eq. 20, -material neohookean_log);
#    the seed's rule (-gpbd_subspace_projection 0) stalls at a relative residual of 5.3e-4;
#  - quasistatic (pseudo time): both forms reach Newton's equilibrium of a bar (6e-10 in positions), and with
#    weak constraints of two hanging blocks (2.3e-8);
#  - 1x1, 2x2, 3x1, 4x1 ranks x threads give bitwise equal positions (Jacobi and Gauss-Seidel), quasistatic
#    Jacobi too;
#  - from an inverted (mirrored) or flat start, both forms (and GS with -material neohookean_log, the
#    seed's Fig. 7 model) end with every element un-inverted (Sec. 4.1's
#    projection, -gpbd_uninvert_min); without it (-1) the Green strain's subspace cannot un-invert them;
#  - a run stopped mid-frame and restarted continues bitwise (Jacobi on 2 ranks, Gauss-Seidel quasistatic);
#  - misuse is a clear error.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# --- the material adapter ----------------------------------------------------------------------------
"$PBNG_TEST_BIN/test_gpbd_terms" > "$TMP/terms.log" 2>&1 && ok || { fail "test_gpbd_terms"; cat "$TMP/terms.log"; }

# --- dynamic: the backward-Euler step ------------------------------------------------------------------
drop=(-scene block_drop_dynamic -res 4 -frames 3 -threads 1)
# (measured, relative residuals from the checker: Newton 9.5e-13 and 1.0e-12 (log); GS 5.1e-11, 5.3e-11 (log),
# Jacobi 9.9e-11; positions: GS 2.9e-13, Jacobi 6.0e-13 from Newton, 6.1e-13 from GS, log GS 2.9e-13)
run newton "${drop[@]}" -solver newton -iters 30 -rtol 1e-12
run gs "${drop[@]}" -solver gpbd -gpbd_form gs -iters 400 -rtol 1e-10
run jacobi "${drop[@]}" -solver gpbd -gpbd_omega 1.9 -iters 2000 -rtol 1e-10
# (Jacobi = GS to 2.7e-12 follows from both = Newton)
check newton --max-relative-residual 1e-12
check gs --max-relative-residual 1e-10 --compare "$TMP/newton.h5" --rtol 9e-13
check jacobi --max-relative-residual 1e-10 --compare "$TMP/newton.h5" --rtol 1.8e-12
run log_newton "${drop[@]}" -material neohookean_log -solver newton -iters 30 -rtol 1e-12
run log_gs "${drop[@]}" -material neohookean_log -solver gpbd -gpbd_form gs -iters 400 -rtol 1e-10
check log_newton --max-relative-residual 1e-12
check log_gs --max-relative-residual 1e-10 --compare "$TMP/log_newton.h5" --rtol 9e-13
# the seed's rule: stalled at 5.273e-4 (100 and 300 sweeps alike; GS proper: 1.1e-12 after 100); the checker
# confirms the stored residual
run seed_rule "${drop[@]}" -solver gpbd -gpbd_form gs -gpbd_subspace_projection 0 -iters 100 -rtol 0 -frames 1
rel=$("$PY" "$HERE/check_output.py" "$TMP/seed_rule.h5" | sed -n 's/.*final relative residual \([^)]*\)).*/\1/p' || true)
echo "seed's rule: relative residual ${rel:-none} after 100 sweeps"
awk -v r="${rel:-0}" 'BEGIN { exit !(r > 1.8e-4 && r < 1.6e-3) }' && ok \
  || fail "the seed's rule should stall at ~5.3e-4 (1.8e-4 .. 1.6e-3), short of the backward-Euler step (or the checker failed)"

# --- quasistatic: the equilibrium ----------------------------------------------------------------------
bar=(-scene bar_gravity -bar_length 1 -res 3 -frames 1 -threads 1)
# (measured: Newton 1.1e-13 (bar), 1.1e-13 (weak); GS / Jacobi 9.1e-10 / 8.7e-10 (bar), 9.9e-16 / 8.8e-16 (weak);
# positions from Newton's: bar 2.1e-10 / 6.5e-11, weak 7.7e-9 / 6.2e-9 (the stiff weak springs: Newton's 1e-13
# leaves that much in positions))
run bar_newton "${bar[@]}" -solver newton -iters 30 -rtol 1e-12
run bar_gs "${bar[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-9
run bar_jacobi "${bar[@]}" -solver gpbd -iters 3000 -rtol 1e-9
check bar_newton --max-relative-residual 1e-12
check bar_gs --max-relative-residual 1e-9 --compare "$TMP/bar_newton.h5" --rtol 6e-10
check bar_jacobi --max-relative-residual 1e-9 --compare "$TMP/bar_newton.h5" --rtol 2e-10
weak=(-scene two_blocks_hanging -res 3 -frames 1 -threads 1)
run weak_newton "${weak[@]}" -solver newton -iters 30 -rtol 1e-12
run weak_gs "${weak[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-15
run weak_jacobi "${weak[@]}" -solver gpbd -iters 3000 -rtol 1e-15
check weak_newton --max-relative-residual 1e-12
check weak_gs --max-relative-residual 1e-15 --compare "$TMP/weak_newton.h5" --rtol 2.3e-8
check weak_jacobi --max-relative-residual 1e-15 --compare "$TMP/weak_newton.h5" --rtol 1.9e-8

# --- inverted and flat starts (Sec. 4.1's projection before the local solve) -------------------------------
# 5 frames: measured, the inverted elements (of 135) per frame: GS 65, 15, 0 from the mirrored start, 0 after
# frame 1 from the flat one; Jacobi 7, 0 and 0; log-barrier GS 59, 0 and 0. Without the projection the flat
# start keeps all 135 and the mirrored one 58-72 in every frame.
box=(-scene box -res 4 -mode dynamic -dt 0.01 -frames 5 -threads 1 -solver gpbd)
for start in inverted flat; do
  run "recover_gs_$start" "${box[@]}" -gpbd_form gs -iters 20 -initial_state "$start"
  run "recover_jacobi_$start" "${box[@]}" -iters 60 -initial_state "$start"
  # the seed's setting (Fig. 7): the log-barrier model, whose energy has no value for an inverted element
  run "recover_log_$start" "${box[@]}" -material neohookean_log -gpbd_form gs -iters 20 -initial_state "$start"
  run "stuck_$start" "${box[@]}" -gpbd_form gs -iters 20 -initial_state "$start" -gpbd_uninvert_min -1
done
# the elements with det F <= 0 in the last frame (NaN positions: all), each file against its expectation; "stuck" in
# the first frame: later, the mirrored block's fate depends on round-off (a change of dt by 1e-16 lets it un-invert by
# frame 3 in some runs, on main's general path and on the closed-form path alike: docs/gpbd_solver.md)
"$PY" - "$TMP" <<'PYEOF' && ok || fail "inverted and flat starts: see the counts above"
import sys, h5py, numpy as np
bad = 0
for start in ("inverted", "flat"):
    for name, want in (("recover_gs", "none"), ("recover_jacobi", "none"), ("recover_log", "none"), ("stuck", "some")):
        f = h5py.File(f"{sys.argv[1]}/{name}_{start}.h5", "r")
        frame = sorted(f["frames"])[1 if want == "some" else -1]
        x, t = f["frames"][frame]["positions"][()], f["mesh/tetrahedra"][()]
        e1, e2, e3 = (x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3))
        n = int((np.einsum("ij,ij->i", np.cross(e1, e2), e3) <= 0).sum()) if np.isfinite(x).all() else len(t)
        good = n == 0 if want == "none" else n > 0
        bad += not good
        print(f"{name} from {start}: {n} of {len(t)} elements inverted in {frame}{'' if good else ' (expected ' + want + ')'}")
sys.exit(1 if bad else 0)
PYEOF

# --- ranks and threads -----------------------------------------------------------------------------------
rj=(-scene block_drop_dynamic -res 4 -frames 2 -solver gpbd -gpbd_omega 1.5 -iters 40)
"$PBNG" "${rj[@]}" -threads 1 -output "$TMP/rj.1x1.h5" > "$TMP/rj.1x1.log" 2>&1 && ok || { fail "jacobi 1x1"; cat "$TMP/rj.1x1.log"; }
for rt in 2x2 3x1 4x1; do
  mpi "${rt%x*}" "$PBNG" "${rj[@]}" -threads "${rt#*x}" -output "$TMP/rj.$rt.h5" > "$TMP/rj.$rt.log" 2>&1 && ok || { fail "jacobi $rt"; cat "$TMP/rj.$rt.log"; }
  compare "rj.$rt" rj.1x1 0
done
rg=(-scene block_drop_dynamic -res 4 -frames 2 -solver gpbd -gpbd_form gs -iters 20)
"$PBNG" "${rg[@]}" -threads 1 -output "$TMP/rg.1x1.h5" > "$TMP/rg.1x1.log" 2>&1 && ok || { fail "gs 1x1"; cat "$TMP/rg.1x1.log"; }
for rt in 2x2 3x1; do
  mpi "${rt%x*}" "$PBNG" "${rg[@]}" -threads "${rt#*x}" -output "$TMP/rg.$rt.h5" > "$TMP/rg.$rt.log" 2>&1 && ok || { fail "gs $rt"; cat "$TMP/rg.$rt.log"; }
  compare "rg.$rt" rg.1x1 0  # measured bitwise
done
rq=(-scene two_blocks_hanging -res 3 -frames 2 -solver gpbd -iters 60)
"$PBNG" "${rq[@]}" -threads 1 -output "$TMP/rq.1x1.h5" > "$TMP/rq.1x1.log" 2>&1 && ok || { fail "quasistatic jacobi 1x1"; cat "$TMP/rq.1x1.log"; }
mpi 3 "$PBNG" "${rq[@]}" -threads 1 -output "$TMP/rq.3x1.h5" > "$TMP/rq.3x1.log" 2>&1 && ok || { fail "quasistatic jacobi 3x1"; cat "$TMP/rq.3x1.log"; }
compare rq.3x1 rq.1x1 0

# --- checkpoint and restart ------------------------------------------------------------------------------
stop_and_restart ckpt_jacobi 2 23 -scene block_drop_dynamic -res 4 -frames 2 -solver gpbd -gpbd_omega 1.5 -iters 15 -threads 1
# (quasistatic: frame 1 reaches the tolerance after 1 sweep, frame 2 runs its 30; the stop falls after 19 of them)
stop_and_restart ckpt_gs_qs 1 20 -scene two_blocks_hanging -res 3 -frames 2 -solver gpbd -gpbd_form gs -gpbd_substeps 2 -iters 30 -threads 1

# --- misuse ----------------------------------------------------------------------------------------------
base=(-scene block_drop_dynamic -res 3 -frames 1 -iters 2 -threads 1 -output "$TMP/bad.h5")
expect_error "omega 2" "must be in [1, 2)" "$PBNG" "${base[@]}" -solver gpbd -gpbd_omega 2
expect_error "omega 0.5" "-gpbd_omega 0.5: must be in [1, 2)" "$PBNG" "${base[@]}" -solver gpbd -gpbd_omega 0.5
expect_error "omega with gs" "-gpbd_omega is for -gpbd_form jacobi" "$PBNG" "${base[@]}" -solver gpbd -gpbd_form gs -gpbd_omega 1.5
expect_error "unknown form" "-gpbd_form: unknown form \"foo\" (known: jacobi, gs)" "$PBNG" "${base[@]}" -solver gpbd -gpbd_form foo
expect_error "unknown fix" "-gpbd_hessian_fix: unknown Hessian fix \"bar\"" "$PBNG" "${base[@]}" -solver gpbd -gpbd_hessian_fix bar
expect_error "newton_max 0" "-gpbd_newton_max 0: must be >= 1" "$PBNG" "${base[@]}" -solver gpbd -gpbd_newton_max 0
expect_error "gpbd options with pbng" "are for -solver gpbd" "$PBNG" "${base[@]}" -solver pbng -gpbd_form gs
expect_error "gpbd options with xpbd" "are for -solver gpbd" "$PBNG" "${base[@]}" -solver xpbd -gpbd_newton_max 3
expect_error "pseudo step in dynamics" "-gpbd_dt and -gpbd_substeps are for -mode quasistatic" "$PBNG" "${base[@]}" -solver gpbd -gpbd_dt 0.01
expect_error "hex8" "-solver gpbd works on linear tetrahedra (tet4), sheets (tri3, bend4)" "$PBNG" "${base[@]}" -solver gpbd -element hex8
expect_error "plasticity" "-solver gpbd does not handle plasticity" "$PBNG" -scene plastic_twist -res 3 -frames 1 -iters 2 -output "$TMP/bad.h5" -solver gpbd
finish
