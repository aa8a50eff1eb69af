#!/usr/bin/env bash
# The PBD, XPBD and XPBD-QS baselines (Sec. 6) and the paper's claims about them that are robust:
#  - PBD loses the external force: the bar's tip deflection shrinks towards 0 as iterations grow (Sec. 6.1,
#    Fig. 6), while PBNG converges to Newton's deflection;
#  - XPBD reduces its secondary residual to round-off while the true residual stagnates (Sec. 6.2, Fig. 7);
#    PBNG reaches 1e-6 on the same frame;
#  - two_blocks_hanging (Fig. 4): PBNG converges to Newton's equilibrium; XPBD-QS leaves the lower block
#    far from it with either order, and "flipped" (weak_first) leaves a gap;
#  - constraint coloring: valid and reported; 1 and 3 ranks, 1 and 2 threads give the same positions;
#  - misuse is a clear error.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
mpi() { "$MPIEXEC" -n "$1" --oversubscribe --bind-to none "${@:2}"; }
run() { local out="$1"; shift; "$PBNG" "$@" -output "$TMP/$out.h5" > "$TMP/$out.log" 2>&1 && ok || { fail "$out: $*"; cat "$TMP/$out.log"; }; }
# value KEY FILE...: a number computed by the python snippet on stdin
measure() { "$PY" - "$@"; }

# --- Fig. 6: bar under gravity -------------------------------------------------------------------
bar=(-scene bar_gravity -res 3 -bar_length 2 -material corotated -threads 1)
run newton "${bar[@]}" -solver newton -iters 40 -rtol 1e-12
run pbng "${bar[@]}" -accel chebyshev -iters 5000 -rtol 1e-11
for it in 1 30 300; do run "pbd$it" "${bar[@]}" -solver pbd -iters "$it" -rtol 0; done
grep -qE "[0-9]+ constraint colors \([0-9]+ element \+ 0 weak\)" "$TMP/pbd1.log" && ok || { fail "PBD: constraint colors not reported"; head -3 "$TMP/pbd1.log"; }
measure "$TMP" <<'PYEOF' && ok || fail "PBD's deflection does not vanish / PBNG differs from Newton"
import sys, h5py, numpy as np
def tip(name):
    f = h5py.File(f"{sys.argv[1]}/{name}.h5", "r")
    X, x = f["mesh/rest_positions"][:], f["frames/000001/positions"][:]
    return (x - X)[X[:, 0] > X[:, 0].max() - 1e-9, 1].mean()
newton, pbng = tip("newton"), tip("pbng")
pbd = [abs(tip(f"pbd{k}")) for k in (1, 30, 300)]
print("tip deflection: newton %.6f pbng %.6f pbd %s" % (newton, pbng, pbd))
assert abs(pbng - newton) < 2.5e-11 * abs(newton), "PBNG != Newton"  # measured 8.3e-12
assert abs(newton) > 1.0, "the bar should sag"
assert pbd[0] > 2 * pbd[1] > 0 and pbd[2] < 1e-4 * pbd[0], "PBD's deflection should vanish as iterations grow"  # measured 2.2x, 3.0e-5
PYEOF
"$PY" "$HERE/check_output.py" "$TMP/pbd300.h5" --quiet && ok || fail "PBD output: independent check"

# --- Fig. 7: XPBD's residual stagnates, PBNG's does not (dynamic) -----------------------------------
drop=(-scene block_drop_dynamic -res 5 -frames 2 -iters 150 -monitor -threads 1)
run xpbd "${drop[@]}" -solver xpbd
run pbng_drop "${drop[@]}"
measure "$TMP" <<'PYEOF' && ok || fail "XPBD/PBNG residuals (Fig. 7)"
import sys, re
def last_iters(name):
    rows = [l.split() for l in open(f"{sys.argv[1]}/{name}.log") if l.strip().startswith("frame 2 iter")]
    return rows
x, p = last_iters("xpbd"), last_iters("pbng_drop")
rel_x, sec = float(x[-1][7]), [float(r[15]) for r in x[1:]]
rel_p = float(p[-1][7])
print("XPBD relative %.3e, secondary %.3e -> %.3e; PBNG relative %.3e" % (rel_x, sec[0], sec[-1], rel_p))
assert sec[-1] < 5e-16 * sec[0], "XPBD's secondary residual should fall to round-off"  # measured 1.6e-16
assert rel_x > 0.25, "XPBD's true residual should stagnate"                            # measured 0.75
assert rel_p < 3.5e-12, "PBNG should converge"                                         # measured 1.1e-12
PYEOF
"$PY" "$HERE/check_output.py" "$TMP/xpbd.h5" --quiet && ok || fail "XPBD output: independent check"

# --- Fig. 4: two blocks hanging --------------------------------------------------------------------
blocks=(-scene two_blocks_hanging -res 5 -threads 1)
run blocks_newton "${blocks[@]}" -solver newton -newton_pc_type lu -iters 30 -rtol 1e-13
run blocks_pbng "${blocks[@]}" -accel chebyshev -iters 300 -rtol 0
run blocks_elastic_first "${blocks[@]}" -solver xpbd_qs -iters 300 -rtol 0
run blocks_weak_first "${blocks[@]}" -solver xpbd_qs -xpbd_order weak_first -iters 300 -rtol 0
measure "$TMP" <<'PYEOF' && ok || fail "two_blocks_hanging: PBNG vs XPBD-QS (Fig. 4)"
import sys, h5py, numpy as np
def load(name):
    f = h5py.File(f"{sys.argv[1]}/{name}.h5", "r")
    w = f["constraints/weak/nodes"][:, :2]
    x = f["frames/000001/positions"][:]
    return x, np.linalg.norm(x[w[:, 1]] - x[w[:, 0]], axis=1).max(), f["frames/000001"].attrs["relative_residual"]
xn, _, _ = load("blocks_newton")
for name in ("blocks_pbng", "blocks_elastic_first", "blocks_weak_first"):
    x, gap, rel = load(name)
    print("%-22s distance to Newton %.3e  largest gap %.3e  relative residual %.3e" % (name, np.abs(x - xn).max(), gap, rel))
x, gap, rel = load("blocks_pbng")
assert np.abs(x - xn).max() < 1.5e-8 and rel < 7e-15, "PBNG should converge"  # measured 4.8e-9, 2.3e-15
for name in ("blocks_elastic_first", "blocks_weak_first"):
    x, gap, rel = load(name)
    assert np.abs(x - xn).max() > 0.1, name + " should be far from the equilibrium"  # measured 0.235, 0.236
x, gap, rel = load("blocks_weak_first")
assert gap > 0.1 and rel > 0.19, "flipped XPBD-QS should leave a gap and a large residual"  # measured 0.21, 0.58
PYEOF

# --- ranks and threads: the same positions; the 3-rank result checked independently with a bound on its
# relative residual, about 3x the measured one (PBD and XPBD do not lower the true residual: 1.03 and 41 measured;
# XPBD-QS 9.5e-2) -----------------------------------------------------------------------------------
for case in "3.1 pbd -scene bar_gravity -res 4 -material corotated" "120 xpbd -scene block_drop_dynamic -res 5 -frames 2" \
            "0.3 xpbd_qs -scene two_blocks_hanging -res 4 -xpbd_order weak_first -xpbd_qs_substeps 4"; do
  read -r bound case <<<"$case"
  read -r -a args <<<"$case"
  tag=${args[0]}
  "$PBNG" -solver "${args[@]}" -iters 40 -threads 2 -output "$TMP/$tag.1.h5" > "$TMP/log" 2>&1 && ok || { fail "$tag, 1 rank"; cat "$TMP/log"; }
  mpi 3 "$PBNG" -solver "${args[@]}" -iters 40 -threads 1 -output "$TMP/$tag.3.h5" > "$TMP/log" 2>&1 && ok || { fail "$tag, 3 ranks"; cat "$TMP/log"; }
  "$PY" "$HERE/check_output.py" "$TMP/$tag.3.h5" --max-relative-residual "$bound" --compare "$TMP/$tag.1.h5" --rtol 0 --quiet && ok ||
    fail "$tag: 3 ranks x 1 thread != 1 rank x 2 threads, or the residual bound $bound"
done

# --- misuse ----------------------------------------------------------------------------------------
err() { expect_error "$1" "$2" "$PBNG" "${@:3}" -output "$TMP/bad.h5"; [ ! -e "$TMP/bad.h5" ] && ok || fail "$1: output written"; }
err "xpbd quasistatic" "-solver xpbd is a dynamic method" -scene bar_gravity -solver xpbd
err "xpbd_qs dynamic" "-solver xpbd_qs runs quasistatic frames" -scene block_drop_dynamic -solver xpbd_qs
err "stable neo-Hookean" "is not a sum of squared constraints" -scene bar_gravity -solver pbd -material stable_neohookean
err "-xpbd_order with pbng" "-xpbd_order is for -solver pbd | xpbd | xpbd_qs" -scene bar_gravity -xpbd_order weak_first
err "unknown order" "-xpbd_order: unknown order" -scene bar_gravity -solver pbd -xpbd_order sideways
err "-xpbd_qs_dt with pbd" "-xpbd_qs_dt and -xpbd_qs_substeps are for -solver xpbd_qs" -scene bar_gravity -solver pbd -xpbd_qs_dt 0.1
err "-xpbd_qs_substeps 0" "-xpbd_qs_substeps 0: must be >= 1" -scene bar_gravity -solver xpbd_qs -xpbd_qs_substeps 0
err "-accel with pbd" "-accel is for -solver pbng" -scene bar_gravity -solver pbd -accel sor
err "-weak_blocks with xpbd_qs" "-weak_blocks is for -solver pbng" -scene two_blocks_hanging -solver xpbd_qs -weak_blocks 0
err "unknown solver" "known: pbng, newton, pbd, xpbd, xpbd_qs" -scene bar_gravity -solver pdb
finish
