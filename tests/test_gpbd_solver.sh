#!/usr/bin/env bash
# -solver gpbd (Generalized PBD, issue 19; docs/gpbd_solver.md), first increment: linear tetrahedra of pbng's
# materials and weak constraints, Jacobi and Gauss-Seidel forms, dynamic and quasistatic, distributed.
#  - the adapter of pbng's materials (tests/test_gpbd_terms.c): gradient and Hessian by central differences;
#  - dynamic: both forms converge to Newton's backward-Euler steps (1e-7 in positions) on a clamped block,
#    and to each other (1e-8), also with the log-barrier neo-Hookean (Eq. 20, -material neohookean_log);
#    the seed's rule (-gpbd_subspace_projection 0) stalls short of it;
#  - quasistatic (pseudo time): both forms reach Newton's equilibrium of a bar (1e-7), and with weak
#    constraints of two hanging blocks (1e-7);
#  - 1x1, 2x2, 3x1, 4x1 ranks x threads give bitwise equal positions (Jacobi; Gauss-Seidel: 1e-12, measured
#    bitwise), quasistatic Jacobi too;
#  - from an inverted (mirrored) or flat start, both forms (and GS with -material neohookean_log, the
#    seed's Fig. 7 model) end with every element un-inverted (Sec. 4.1's
#    projection, -gpbd_uninvert_min); without it (-1) the Green strain's subspace cannot un-invert them;
#  - a run stopped mid-frame and restarted continues bitwise (Jacobi on 2 ranks, Gauss-Seidel quasistatic);
#  - misuse is a clear error.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
compare() { "$PY" "$HERE/check_output.py" "$TMP/$1.h5" --compare "$TMP/$2.h5" --rtol "$3" --quiet && ok || fail "$1 vs $2: positions differ by more than $3"; }

# --- the material adapter ----------------------------------------------------------------------------
"$PBNG_TEST_BIN/test_gpbd_terms" > "$TMP/terms.log" 2>&1 && ok || { fail "test_gpbd_terms"; cat "$TMP/terms.log"; }

# --- dynamic: the backward-Euler step ------------------------------------------------------------------
drop=(-scene block_drop_dynamic -res 4 -frames 3 -threads 1)
run newton "${drop[@]}" -solver newton -iters 30 -rtol 1e-12
run gs "${drop[@]}" -solver gpbd -gpbd_form gs -iters 400 -rtol 1e-10
run jacobi "${drop[@]}" -solver gpbd -gpbd_omega 1.9 -iters 2000 -rtol 1e-10
check gs
check jacobi
compare gs newton 1e-7
compare jacobi newton 1e-7
compare jacobi gs 1e-8
run log_newton "${drop[@]}" -material neohookean_log -solver newton -iters 30 -rtol 1e-12
run log_gs "${drop[@]}" -material neohookean_log -solver gpbd -gpbd_form gs -iters 400 -rtol 1e-10
compare log_gs log_newton 1e-7
run seed_rule "${drop[@]}" -solver gpbd -gpbd_form gs -gpbd_subspace_projection 0 -iters 100 -frames 1
"$PY" - "$TMP/seed_rule.h5" <<'PYEOF' && ok || fail "the seed's rule should stall short of the backward-Euler step"
import sys, h5py
rel = h5py.File(sys.argv[1], "r")["frames/000001"].attrs["relative_residual"]
print(f"seed's rule: relative residual {rel:.3e} after 100 sweeps")
sys.exit(0 if rel > 1e-5 else 1)
PYEOF

# --- quasistatic: the equilibrium ----------------------------------------------------------------------
bar=(-scene bar_gravity -bar_length 1 -res 3 -frames 1 -threads 1)
run bar_newton "${bar[@]}" -solver newton -iters 30 -rtol 1e-12
run bar_gs "${bar[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-9
run bar_jacobi "${bar[@]}" -solver gpbd -iters 3000 -rtol 1e-9
compare bar_gs bar_newton 1e-7
compare bar_jacobi bar_newton 1e-7
weak=(-scene two_blocks_hanging -res 3 -frames 1 -threads 1)
run weak_newton "${weak[@]}" -solver newton -iters 30 -rtol 1e-12
run weak_gs "${weak[@]}" -solver gpbd -gpbd_form gs -iters 3000 -rtol 1e-15
run weak_jacobi "${weak[@]}" -solver gpbd -iters 3000 -rtol 1e-15
compare weak_gs weak_newton 1e-7
compare weak_jacobi weak_newton 1e-7

# --- inverted and flat starts (Sec. 4.1's projection before the local solve) -------------------------------
inverted_count() { # H5: prints and returns the count of elements with det F <= 0 in the last frame (NaN: 999999)
  "$PY" - "$TMP/$1.h5" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
x, t = f["frames"][sorted(f["frames"])[-1]]["positions"][()], f["mesh/tetrahedra"][()]
e1, e2, e3 = (x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3))
n = int((np.einsum("ij,ij->i", np.cross(e1, e2), e3) <= 0).sum()) if np.isfinite(x).all() else 999999
print(n)
PYEOF
}
box=(-scene box -res 4 -mode dynamic -dt 0.01 -frames 10 -threads 1 -solver gpbd)
for start in inverted flat; do
  run "recover_gs_$start" "${box[@]}" -gpbd_form gs -iters 20 -initial_state "$start"
  run "recover_jacobi_$start" "${box[@]}" -iters 60 -initial_state "$start"
  for f in gs jacobi; do
    n=$(inverted_count "recover_${f}_$start"); [ "$n" = 0 ] && ok || fail "$f from $start: $n elements still inverted (or NaN)"
  done
  # the seed's setting (Fig. 7): the log-barrier model, whose energy has no value for an inverted element
  run "recover_log_$start" "${box[@]}" -material neohookean_log -gpbd_form gs -iters 20 -initial_state "$start"
  n=$(inverted_count "recover_log_$start"); [ "$n" = 0 ] && ok || fail "neohookean_log from $start: $n elements still inverted (or NaN)"
  run "stuck_$start" "${box[@]}" -gpbd_form gs -iters 20 -initial_state "$start" -gpbd_uninvert_min -1
  n=$(inverted_count "stuck_$start"); [ "$n" -gt 0 ] && ok || fail "without the projection the $start start should stay (partly) inverted: $n"
done

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
  compare "rg.$rt" rg.1x1 1e-12
done
rq=(-scene two_blocks_hanging -res 3 -frames 2 -solver gpbd -iters 60)
"$PBNG" "${rq[@]}" -threads 1 -output "$TMP/rq.1x1.h5" > "$TMP/rq.1x1.log" 2>&1 && ok || { fail "quasistatic jacobi 1x1"; cat "$TMP/rq.1x1.log"; }
mpi 3 "$PBNG" "${rq[@]}" -threads 1 -output "$TMP/rq.3x1.h5" > "$TMP/rq.3x1.log" 2>&1 && ok || { fail "quasistatic jacobi 3x1"; cat "$TMP/rq.3x1.log"; }
compare rq.3x1 rq.1x1 0

# --- checkpoint and restart ------------------------------------------------------------------------------
stop_and_restart() { # TAG RANKS AFTER OPTIONS...
  local tag=$1 ranks=$2 after=$3 rc=0; shift 3
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.full.h5" > "$TMP/$tag.full.log" 2>&1 || { fail "$tag: uninterrupted run"; cat "$TMP/$tag.full.log"; return; }
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -test_signal_after "$after" > "$TMP/$tag.1.log" 2>&1 || rc=$?
  [ "$rc" = 85 ] && ok || { fail "$tag: stopped run exited $rc, not 85"; cat "$TMP/$tag.1.log"; return; }
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -restart auto > "$TMP/$tag.2.log" 2>&1 && ok || { fail "$tag: restart"; cat "$TMP/$tag.2.log"; return; }
  compare "$tag" "$tag.full" 0
}
stop_and_restart ckpt_jacobi 2 23 -scene block_drop_dynamic -res 4 -frames 2 -solver gpbd -gpbd_omega 1.5 -iters 15 -threads 1
stop_and_restart ckpt_gs_qs 1 37 -scene two_blocks_hanging -res 3 -frames 2 -solver gpbd -gpbd_form gs -gpbd_substeps 2 -iters 30 -threads 1

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
