#!/usr/bin/env bash
# PBNG on a small bar under gravity (Sec. 10.4) for every material, with and without acceleration,
# reaches relative residual <= 1e-8; the result is checked independently (tests/check_output.py
# recomputes energy and residual with numpy from the HDF5 file alone).
source "$(dirname "$0")/lib.sh"
for material in corotated neohookean stable_neohookean; do
  for accel in none sor chebyshev; do
    out="$TMP/bar_${material}_${accel}.h5"
    if "$PBNG" -scene bar_gravity -res 4 -bar_length 1 -material $material -accel $accel -iters 4000 -rtol 1e-8 \
        -threads 2 -output "$out" -summary "$TMP/s.json" > "$TMP/log" 2>&1; then ok; else fail "run $material $accel"; cat "$TMP/log"; continue; fi
    if "$PY" "$HERE/check_output.py" "$out" --max-relative-residual 1e-8 --frames 1; then ok; else fail "check $material $accel"; fi
  done
done
finish
