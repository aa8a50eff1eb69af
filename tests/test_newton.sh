#!/usr/bin/env bash
# The Newton baseline (-solver newton, PETSc SNES): reaches relative residual <= 1e-10 on a small bar
# (neohookean_log too) and a small stretched and twisted box for every material (checked independently from the file), with
# each linear-solver preset and with Eisenstat-Walker; agrees with PBNG run to convergence (node
# positions within 4e-11 of the largest coordinate on the bar, 1.5e-11 on the box; measured at most 1.3e-11,
# 4.4e-12), and gives the same solution on 1, 2 and 4 ranks (2e-12; measured 7.1e-13). Every Newton result is
# checked independently (relative residual <= 1e-10); each PBNG result by its agreement with Newton's.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
bar=(-scene bar_gravity -res 4 -bar_length 1)
for material in corotated neohookean stable_neohookean neohookean_log; do
  out="$TMP/newton_$material.h5"
  if "$PBNG" "${bar[@]}" -material $material -solver newton -iters 40 -rtol 1e-10 -residual_every 1 -threads 1 -output "$out" > "$TMP/log" 2>&1; then ok
  else fail "newton $material"; cat "$TMP/log"; continue; fi
  "$PY" "$HERE/check_output.py" "$out" --frames 1 --max-relative-residual 1e-10 --quiet && ok || fail "newton $material: independent check"
  "$PBNG" "${bar[@]}" -material $material -accel chebyshev -iters 20000 -rtol 1e-11 -threads 1 -output "$TMP/pbng_$material.h5" > "$TMP/log" 2>&1 && ok || fail "pbng $material"
  "$PY" "$HERE/check_output.py" "$out" --compare "$TMP/pbng_$material.h5" --rtol 4e-11 --quiet && ok || fail "newton and pbng equilibria differ ($material)"
done
box=(-scene box_stretch_twist -res 4 -frames 2)
presets=(gamg hypre bjacobi_icc)
k=0
for material in corotated neohookean stable_neohookean; do
  preset=${presets[$k]}; k=$((k + 1))
  out="$TMP/newton_box_$material.h5"
  if "$PBNG" "${box[@]}" -material $material -solver newton -newton_preconditioner $preset -iters 40 -rtol 1e-10 \
      -threads 2 -monitor -output "$out" > "$TMP/log" 2>&1; then ok
  else fail "newton box $material ($preset)"; cat "$TMP/log"; continue; fi
  "$PY" "$HERE/check_output.py" "$out" --frames 2 --max-relative-residual 1e-10 --quiet && ok || fail "newton box $material: independent check"
  grep -q "linear (Krylov) iterations" "$TMP/log" && grep -Eq "iter +1 .* linear [1-9]" "$TMP/log" && ok || fail "newton box: no linear iteration counts reported"
  "$PBNG" "${box[@]}" -material $material -accel chebyshev -iters 20000 -rtol 1e-11 -threads 1 -output "$TMP/pbng_box_$material.h5" > "$TMP/log" 2>&1 && ok || fail "pbng box $material"
  "$PY" "$HERE/check_output.py" "$out" --compare "$TMP/pbng_box_$material.h5" --rtol 1.5e-11 --quiet && ok || fail "box: newton and pbng equilibria differ ($material)"
done
# Eisenstat-Walker inexact Newton (PETSc's -snes_ksp_ew) still converges to the same equilibrium (this and the two
# variants below: 1.5e-11; measured 1.6e-12, 4.5e-12, 4.4e-12)
"$PBNG" "${box[@]}" -material neohookean -solver newton -newton_snes_ksp_ew -iters 60 -rtol 1e-10 -residual_every 1 -threads 2 \
  -output "$TMP/newton_ew.h5" > "$TMP/log" 2>&1 && ok || { fail "newton with Eisenstat-Walker"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/newton_ew.h5" --max-relative-residual 1e-10 --compare "$TMP/newton_box_neohookean.h5" --rtol 1.5e-11 --quiet && ok || fail "Eisenstat-Walker: different equilibrium"
# the other PSD projection (the 12x12 element matrix; the default goes through dP/dF) converges to the
# same equilibrium
"$PBNG" "${box[@]}" -material corotated -solver newton -newton_projection element -iters 60 -rtol 1e-10 -residual_every 1 -threads 2 \
  -output "$TMP/newton_element.h5" > "$TMP/log" 2>&1 && ok || { fail "newton with -newton_projection element"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/newton_element.h5" --max-relative-residual 1e-10 --compare "$TMP/newton_box_corotated.h5" --rtol 1.5e-11 --quiet && ok || fail "element projection: different equilibrium"
# the unmodified Hessian (-newton_exact_hessian) with MINRES, which tolerates an indefinite matrix
"$PBNG" "${box[@]}" -material corotated -solver newton -newton_exact_hessian -newton_ksp_type minres -newton_pc_type jacobi -iters 60 \
  -rtol 1e-10 -residual_every 1 -threads 2 -output "$TMP/newton_exact.h5" > "$TMP/log" 2>&1 && ok || { fail "newton -newton_exact_hessian"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/newton_exact.h5" --max-relative-residual 1e-10 --compare "$TMP/newton_box_corotated.h5" --rtol 1.5e-11 --quiet && ok || fail "exact Hessian: different equilibrium"
expect_error "misspelt Newton option" "option -newton_precondtioner was not used by the Newton solver" "$PBNG" "${box[@]}" -solver newton \
  -newton_precondtioner hypre -output "$TMP/bad.h5"
[ ! -e "$TMP/bad.h5" ] && ok || fail "misspelt Newton option: output written"
expect_error "Newton option with -solver pbng" "option -newton_preconditioner is for -solver newton" "$PBNG" "${box[@]}" -newton_preconditioner hypre -output "$TMP/bad.h5"
expect_error "unknown projection" "unknown \"svd\" (known: stress, element)" "$PBNG" "${box[@]}" -solver newton -newton_projection svd -output "$TMP/bad.h5"
expect_error "unknown preconditioner preset" "unknown preset \"ilu\"" "$PBNG" "${box[@]}" -solver newton -newton_preconditioner ilu -output "$TMP/bad.h5"
for n in 2 4; do
  out="$TMP/newton_ranks$n.h5"
  if "$MPIEXEC" -n $n --oversubscribe --bind-to none "$PBNG" "${bar[@]}" -material neohookean -solver newton -iters 40 -rtol 1e-10 \
      -residual_every 1 -threads 1 -output "$out" > "$TMP/log" 2>&1; then ok; else fail "newton on $n ranks"; cat "$TMP/log"; fi
  "$PY" "$HERE/check_output.py" "$out" --max-relative-residual 1e-10 --compare "$TMP/newton_neohookean.h5" --rtol 2e-12 --quiet && ok || fail "newton: $n ranks differ from 1"
done
finish
