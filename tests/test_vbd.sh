#!/usr/bin/env bash
# The VBD variants of PBNG's node step (docs/gpbd_solver.md#vbd-and-pbng): -vbd_line_search (VBD's
# backtracking line search on the node's local incremental potential) and -vbd_exact_block (the exact
# element Hessian blocks, each clamped PSD, + inertia, instead of Eq. 36-38; FD-checked by
# tests/test_vbd_block.c):
# - where no step is shortened (the dynamic block drop), the line search changes nothing, bitwise;
# - both variants converge to Newton's backward-Euler step;
# - 1 rank x 1 thread and 2 ranks x 2 threads bitwise equal, on a run where the line search acts;
# - a large step from a flattened StVK start, where plain PBNG's first sweep overshoots: with the line
#   search the energy falls at every sweep (and the steps it shortened are counted by -monitor);
# - refusals.
source "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
drop=(-scene block_drop_dynamic -res 4 -frames 3 -threads 1)
run plain "${drop[@]}" -accel none -iters 3000 -rtol 1e-10
run ls "${drop[@]}" -accel none -iters 3000 -rtol 1e-10 -vbd_line_search
check ls --compare "$TMP/plain.h5" --rtol 0
run exact "${drop[@]}" -accel none -iters 3000 -rtol 1e-10 -vbd_exact_block -vbd_line_search
run newton "${drop[@]}" -solver newton -rtol 1e-11
# measured: residuals Newton 9.2e-12, line search 2.4e-11, exact block 3.9e-12; positions 1.75e-12 and 2.1e-13
# from Newton's
check newton --frames 3 --max-relative-residual 1e-11
check ls --frames 3 --max-relative-residual 1e-10 --compare "$TMP/newton.h5" --rtol 5.3e-12
check exact --frames 3 --max-relative-residual 1e-10 --compare "$TMP/newton.h5" --rtol 6.3e-13

# rank/thread independence where the line search shortens steps (-iters fixed: the same sweeps)
flat=(-scene block_drop_dynamic -res 4 -frames 1 -accel none -material stvk -initial_state flat -dt 0.3 -iters 120 -monitor)
for v in "-vbd_line_search" "-vbd_line_search -vbd_exact_block"; do
  name=ranks${v// /}; name=${name//-/_}
  "$PBNG" "${flat[@]}" $v -threads 1 -output "$TMP/$name.1.h5" > "$TMP/$name.1.log" 2>&1 && ok || { fail "$name 1x1"; cat "$TMP/$name.1.log"; }
  mpi 2 "$PBNG" "${flat[@]}" $v -threads 2 -output "$TMP/$name.2.h5" > "$TMP/$name.2.log" 2>&1 && ok || { fail "$name 2x2"; cat "$TMP/$name.2.log"; }
  "$PY" "$HERE/check_output.py" "$TMP/$name.2.h5" --quiet --compare "$TMP/$name.1.h5" --rtol 0 && ok || fail "$name: 1x1 and 2x2 differ"
  halved=$(grep -o "ls_halved [0-9]*" "$TMP/$name.1.log" | tail -1 | awk '{print $2}')
  [ "${halved:-0}" -gt 0 ] && ok || fail "$name: the line search shortened no step (ls_halved ${halved:-none})"
  [ "$(grep -o "ls_halved [0-9]* ls_kept [0-9]*" "$TMP/$name.1.log" | tail -1)" = "$(grep -o "ls_halved [0-9]* ls_kept [0-9]*" "$TMP/$name.2.log" | tail -1)" ] \
    && ok || fail "$name: the line search's counts differ between 1x1 and 2x2"
done

# a large step (dt 1) from a flattened StVK block: plain PBNG's first sweep overshoots (the energy grows
# ~1e5-fold, then falls again); with the line search every node step, hence every sweep, lowers the energy
big=(-scene block_drop_dynamic -res 4 -frames 1 -accel none -material stvk -initial_state flat -dt 1 -iters 3000 -rtol 1e-6 -threads 1 -monitor)
run big_plain "${big[@]}"
run big_ls "${big[@]}" -vbd_line_search
run big_exact_ls "${big[@]}" -vbd_line_search -vbd_exact_block
# energy increases between iterations (beyond the printed digits)
increases() { grep -E "iter +[0-9]+ " "$TMP/$1.log" | awk '{for (i = 1; i <= NF; i++) if ($i == "energy") e = $(i + 1);
  if (NR > 1 && e > prev + 1e-10 * (prev < 0 ? -prev : prev)) n++; prev = e} END {print n + 0}'; }
sweeps() { grep -o "iters *[0-9]*" "$TMP/$1.log" | tail -1 | awk '{print $2}'; }
echo "stvk flat start, dt 1: plain $(sweeps big_plain) sweeps ($(increases big_plain) energy increases), -vbd_line_search $(sweeps big_ls)" \
  "($(increases big_ls)), with -vbd_exact_block $(sweeps big_exact_ls) ($(increases big_exact_ls))"
[ "$(increases big_plain)" -gt 0 ] && ok || fail "plain PBNG did not overshoot on the large step (the case no longer shows the line search's point)"
[ "$(increases big_ls)" -eq 0 ] && ok || fail "-vbd_line_search: the energy grew between sweeps"
[ "$(increases big_exact_ls)" -eq 0 ] && ok || fail "-vbd_line_search -vbd_exact_block: the energy grew between sweeps"
# all three reach the -rtol 1e-6 (measured 9.99e-7, 9.89e-7, 9.78e-7 in 679, 349, 307 sweeps)
check big_plain --frames 1 --max-relative-residual 1e-6
check big_ls --frames 1 --max-relative-residual 1e-6
check big_exact_ls --frames 1 --max-relative-residual 1e-6

expect_error "line search for newton" "-vbd_line_search is for -solver pbng (the solver is newton)" "$PBNG" -scene box -res 3 -solver newton -vbd_line_search \
  -output "$TMP/bad.h5"
expect_error "exact block for xpbd" "-vbd_exact_block is for -solver pbng (the solver is xpbd)" "$PBNG" -scene box -res 3 -solver xpbd -vbd_exact_block \
  -output "$TMP/bad.h5"
expect_error "exact block quasistatic" "-vbd_exact_block needs -mode dynamic" "$PBNG" -scene box -res 3 -vbd_exact_block -output "$TMP/bad.h5"
expect_error "exact block on tet10" "-vbd_exact_block: linear tetrahedra only (this mesh has tet10 elements)" "$PBNG" -scene box -res 2 -element tet10 \
  -mode dynamic -vbd_exact_block -output "$TMP/bad.h5"
finish
