#!/usr/bin/env bash
# -solver sissm on peridynamic membranes (issue 20 item 2; docs/peridynamics.md#sissm):
#  - the rings' forces against the energy are checked in test_pd_terms (FD) and test_peridynamics_hessian;
#  - the exact form converges to the backward-Euler step (relative residual 1e-9, the checker's) on the stretched
#    sheet, plain and with Chebyshev, and Chebyshev takes fewer iterations; with D built once a frame
#    (-sissm_d_every 1000) too, to the same positions; Newton on the same energy (the rings' Hessians assembled)
#    reaches 1e-11 and the same positions (1e-10), on 1 and 2 ranks (round-off);
#  - no vertex step raises its vertex energy E_i (others held) beyond round-off (-sissm_check_energy);
#  - the seed's Eq. 25 (-sissm_form seed) runs; its fixed point is not the equilibrium of non-affine rings, so it
#    stalls at a relative residual of 0.12 (measured, docs/peridynamics.md#sissm);
#  - 1x1 = 3x2 ranks x threads to round-off (the owners add other ranks' ring sums in their own order);
#  - misuse is a clear error.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# each frame's relative residual recomputed by the checker (ring energies by complex steps) below the runs'
# tolerance, and the positions compared (measured: residuals plain 9.7e-10 / 9.2e-10, Chebyshev 9.4e-10 / 5.5e-10,
# -sissm_d_every 9.8e-10 / 9.2e-10, Newton 3.5e-13 / 6.5e-13; positions Chebyshev vs plain 2.7e-12 (8.5e-13 when the residual was checked every 10 iterations), D once a frame
# vs plain 5.5e-13, plain vs Newton 3.2e-11, Newton on 2 ranks vs 1 rank 5.1e-15)
pd=(-scene cloth_stretch -res 11 -mode dynamic -dt 0.01 -frames 2 -threads 1 -sheet_model peridynamic -solver sissm)
run newton "${pd[@]/sissm/newton}" -iters 30 -rtol 1e-11
check newton --max-relative-residual 1e-11
run plain "${pd[@]}" -iters 3000 -rtol 1e-9
check plain --max-relative-residual 1e-9 --compare "$TMP/newton.h5" --rtol 1e-10
run cheb "${pd[@]}" -iters 3000 -rtol 1e-9 -sissm_chebyshev
check cheb --max-relative-residual 1e-9 --compare "$TMP/plain.h5" --rtol 8e-12
# -sissm_d_every 1000: D built once a frame reaches the same tolerance and positions
run dframe "${pd[@]}" -iters 3000 -rtol 1e-9 -sissm_d_every 1000
check dframe --max-relative-residual 1e-9 --compare "$TMP/plain.h5" --rtol 1.7e-12
mpi 2 "$PBNG" "${pd[@]/sissm/newton}" -iters 30 -rtol 1e-11 -output "$TMP/newton2.h5" > "$TMP/newton2.log" 2>&1 && ok || { fail "newton on 2 ranks"; cat "$TMP/newton2.log"; }
compare newton2 newton 1.5e-14
ip=$(grep -o "[0-9]* iterations" "$TMP/plain.log" | head -1 | cut -d' ' -f1); ic=$(grep -o "[0-9]* iterations" "$TMP/cheb.log" | head -1 | cut -d' ' -f1)
[ "$ic" -lt "$ip" ] && ok || fail "chebyshev $ic iterations, plain $ip"
grep -q "peridynamic" "$TMP/plain.log" && ok || fail "header names the peridynamic model: $(head -1 "$TMP/plain.log")"

# --- the vertex energy ---------------------------------------------------------------------------------------
"$PBNG" "${pd[@]}" -frames 1 -iters 400 -sissm_check_energy -monitor -output "$TMP/energy.h5" > "$TMP/energy.log" 2>&1 && ok || fail "check energy run"
n=$(grep -c "increases" "$TMP/energy.log"); [ "$n" -ge 300 ] && ok || fail "monitor lines with increases: $n"
grep "increases [1-9]" "$TMP/energy.log" | head -3 | grep . && fail "a vertex step raised its vertex energy" || ok

# --- the seed's Eq. 25 ---------------------------------------------------------------------------------------
# stalled at a relative residual of 0.1157 (measured; the exact form reaches 1e-9 above): the band 0.039 .. 0.35, the
# value from the checker's report (its recomputed residual matches the stored one, else no value)
run seed "${pd[@]}" -dt 0.001 -frames 1 -iters 300 -rtol 0 -sissm_form seed
r=$("$PY" "$HERE/check_output.py" "$TMP/seed.h5" | sed -n 's/.*final relative residual \([^)]*\)).*/\1/p' || true)
awk -v r="${r:-0}" 'BEGIN { exit !(r > 0.039 && r < 0.35) }' && ok || fail "seed form: relative residual ${r:-none} (expected the stall at ~0.12: 0.039 .. 0.35)"

# --- ranks and threads -------------------------------------------------------------------------------------
rr=(-scene cloth_stretch -res 13 -mode dynamic -dt 0.01 -frames 2 -iters 60 -sheet_model peridynamic -pd_material neohookean -pd_kb 2e4 -solver sissm
  -sissm_chebyshev)
"$PBNG" "${rr[@]}" -threads 1 -output "$TMP/r.1x1.h5" > "$TMP/r.1x1.log" 2>&1 && ok || { fail "1x1"; cat "$TMP/r.1x1.log"; }
mpi 3 "$PBNG" "${rr[@]}" -threads 2 -output "$TMP/r.3x2.h5" > "$TMP/r.3x2.log" 2>&1 && ok || { fail "3x2"; cat "$TMP/r.3x2.log"; }
compare r.3x2 r.1x1 0  # bitwise: every node sums its rings in one order on any ranks (7.7e-16 apart before)
mpi 2 "$PBNG" "${rr[@]}" -threads 1 -output "$TMP/r.2x1.h5" > "$TMP/r.2x1.log" 2>&1 && ok || { fail "2x1"; cat "$TMP/r.2x1.log"; }
compare r.2x1 r.1x1 0

# --- misuse ------------------------------------------------------------------------------------------------
base=(-scene cloth_stretch -res 5 -frames 1 -iters 2 -output "$TMP/bad.h5")
expect_error "sissm without the model" "give -sheet_model peridynamic" "$PBNG" "${base[@]}" -mode dynamic -solver sissm
expect_error "pbng on the model" "does not handle peridynamic membranes" "$PBNG" "${base[@]}" -mode dynamic -sheet_model peridynamic
expect_error "quasistatic sissm" "backward-Euler steps" "$PBNG" "${base[@]}" -sheet_model peridynamic -solver sissm
expect_error "negative s0" "-pd_s0" "$PBNG" "${base[@]}" -mode dynamic -sheet_model peridynamic -solver sissm -pd_s0 -1
expect_error "pd option alone" "are for -sheet_model peridynamic" "$PBNG" "${base[@]}" -pd_kb 3
expect_error "sissm option elsewhere" "are for -solver sissm" "$PBNG" "${base[@]}" -sissm_chebyshev
expect_error "-sissm_d_every 0" "-sissm_d_every 0: must be >= 1" "$PBNG" "${base[@]}" -mode dynamic -sheet_model peridynamic -solver sissm -sissm_d_every 0
expect_error "-sissm_d_every, seed form" "-sissm_d_every is for -sissm_form exact" "$PBNG" "${base[@]}" -mode dynamic -sheet_model peridynamic -solver sissm -sissm_form seed -sissm_d_every 5
expect_error "volume mesh" "-sheet_model has no effect in this run: the mesh has no sheet elements (tri3)" "$PBNG" -scene box -res 3 -frames 1 -iters 2 -output "$TMP/bad.h5" -mode dynamic -sheet_model peridynamic -solver sissm
finish
