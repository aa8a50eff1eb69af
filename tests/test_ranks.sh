#!/usr/bin/env bash
# Rank- and thread-count independence (issue 3): for the fixed global coloring, 1, 2, 3 and 4 ranks
# (oversubscribed) x 1 and 2 threads give the same positions as 1 rank x 1 thread: bitwise for the
# neo-Hookean models, within 1e-12 relative for the corotated one (its polar decompositions are
# warm-started from per-rank histories and converge to ~1e-13 rad). Each result is also checked
# independently (residual, energy) by check_output.py.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_WAIT_POLICY=passive # oversubscribed: threads must not spin at barriers
cases=(
  "box_nh|0|-scene box_stretch_twist -res 12 -frames 2 -iters 30 -accel chebyshev"
  "box_cor|1e-12|-scene box_stretch_twist -res 12 -frames 2 -iters 30 -material corotated -accel sor"
  "drop_snh|0|-scene block_drop_dynamic -res 8 -frames 3 -iters 30 -material stable_neohookean"
  "gmsh|0|-mesh $PBNG_TEST_DATA/cube_fine_v41.msh -fix_group left -gravity 0,-9.8,0 -youngs 1e4 -frames 2 -iters 40"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name rtol args <<<"$c"
  for n in 1 2 3 4; do
    for t in 1 2; do
      out="$TMP/${name}_${n}x${t}.h5"
      # shellcheck disable=SC2086
      if "$MPIEXEC" -n $n --oversubscribe --bind-to none "$PBNG" $args -threads $t -output "$out" > "$TMP/log" 2>&1; then ok
      else fail "$name on $n ranks x $t threads"; cat "$TMP/log"; continue; fi
      [ "$n$t" = "11" ] && continue
      "$PY" "$HERE/check_output.py" "$TMP/${name}_1x1.h5" --compare "$out" --rtol "$rtol" --quiet && ok \
        || fail "$name: $n ranks x $t threads differ from 1 x 1 (allowed $rtol)"
    done
  done
  "$PY" "$HERE/check_output.py" "$TMP/${name}_4x2.h5" --quiet && ok || fail "$name: independent check of the 4-rank result"
  "$PY" - "$TMP/${name}_4x2.h5" <<'PYEOF' && ok || fail "$name: /mesh/partition does not record 4 owners"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert sorted(np.unique(f["/mesh/partition"][...])) == [0, 1, 2, 3]
PYEOF
done
finish
