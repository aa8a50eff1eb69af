#!/usr/bin/env bash
# tests/check_output.py on peridynamic membranes (-sheet_model peridynamic, docs/peridynamics.md): the checker
# recomputes every frame's residual and energy from its own ring energies (elastic_pd: gradient by complex
# steps, the moving normal included). pbng's results pass: the stretching model (default), the neo-Hookean one
# with its own k_b and virtual-bond length, and a sheet sagging under gravity (curved rings: the normal's chain
# and the bending term are nonzero); copies with one node of a frame moved by 1e-3, or with a root attribute of
# the peridynamic material changed, fail with a residual or energy mismatch, and a copy without the attributes
# is rejected by name.
source "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
# the three files, each solved to -rtol 1e-9 (SISSM with Chebyshev): the checker's recomputed residual of every
# frame below it (measured with the residual checked after iterations 1..8, then a quarter of the iterations apart:
# stretching 8.4e-10 / 1.7e-10 after 91 / 101 iterations; with a check every 10 iterations it was 1.6e-10 / 2.0e-10,
# neohookean 6.4e-10 / 5.9e-10, sagging 7.0e-10)
COMMON=(-scene cloth_stretch -res 9 -mode dynamic -dt 0.01 -iters 2000 -rtol 1e-9 -sheet_model peridynamic -solver sissm -sissm_chebyshev
  -threads 1)
run stretching "${COMMON[@]}" -frames 2
# (its check is below, with the report's wording)
run neohookean "${COMMON[@]}" -frames 2 -pd_material neohookean -pd_kb 2e4 -pd_thickness 0.002
check neohookean --frames 2 --max-relative-residual 1e-9
run sagging "${COMMON[@]}" -frames 1 -gravity 0,0,-9.81
check sagging --frames 1 --max-relative-residual 1e-9
# the residual and energy are recomputed, not skipped: with the checker's physics disabled by a wrong
# material the stretching file must fail (below), and the good file's report must not say "not recomputed"
out=$("$PY" "$HERE/check_output.py" "$TMP/stretching.h5" --frames 2 --max-relative-residual 1e-9 2>&1) && ! grep -q "not recomputed" <<<"$out" && ok \
  || fail "stretching: checker report: $out"

# corrupt SOURCE NAME 'python on f (h5py File, r+)' 'FAIL message'...: a copy of $TMP/SOURCE.h5 (and its XDMF,
# pointed at the copy) changed so, which the checker must reject with every message given
corrupt() {
  local src="$1" name="$2" code="$3" out msg
  shift 3
  cp "$TMP/$src.h5" "$TMP/$name.h5" && sed "s/$src\.h5:/$name.h5:/g" "$TMP/$src.xdmf" > "$TMP/$name.xdmf" \
    || { fail "$name: cannot copy"; return; }
  "$PY" - "$TMP/$name.h5" <<EOF || { fail "$name: cannot make the copy"; return; }
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    $code
EOF
  if out=$("$PY" "$HERE/check_output.py" "$TMP/$name.h5" 2>&1); then fail "$name: accepted"; return; fi
  for msg in "$@"; do
    grep -qF -- "$msg" <<<"$out" || { fail "$name: the checker's report lacks '$msg': $out"; return; }
  done
  ok
}
corrupt stretching moved_node 'f["frames/000001/positions"][40, 2] += 1e-3' \
  "frame 000001 (peridynamic stretching/dynamic): recomputed residual" "frame 000001 (peridynamic stretching/dynamic): recomputed energy"
corrupt stretching moved_node_inplane 'f["frames/000002/positions"][30, 0] += 1e-3' \
  "frame 000002 (peridynamic stretching/dynamic): recomputed residual" "frame 000002 (peridynamic stretching/dynamic): recomputed energy"
corrupt stretching s0_changed 'f.attrs["pd_s0"] = 1.01 * f.attrs["pd_s0"]' \
  "frame 000001 (peridynamic stretching/dynamic): recomputed residual" "frame 000001 (peridynamic stretching/dynamic): recomputed energy"
corrupt stretching material_changed 'f.attrs["pd_material"] = np.bytes_("neohookean")' \
  "frame 000001 (peridynamic neohookean/dynamic): recomputed residual"
corrupt neohookean s1_changed 'f.attrs["pd_s1"] = 1.01 * f.attrs["pd_s1"]' \
  "frame 000001 (peridynamic neohookean/dynamic): recomputed residual"
corrupt sagging kb_changed 'f.attrs["pd_kb"] = 1.5 * f.attrs["pd_kb"]' \
  "frame 000001 (peridynamic stretching/dynamic): recomputed residual"
# (pd_thickness itself is invisible here: on a flat rest ring the virtual bond's length cancels from F,
# docs/peridynamics.md#what-is-exact; the sheet thickness scales V_i and the masses, so every force and
# the (converged) residual by the same factor, and the energy shows it)
corrupt stretching sheet_thickness_changed 'f.attrs["sheet_thickness"] = 1.01 * f.attrs["sheet_thickness"]' \
  "frame 000001 (peridynamic stretching/dynamic): recomputed energy"
corrupt stretching no_pd_attributes 'del f.attrs["pd_s0"]' "sheet_model peridynamic without the root attributes ['pd_s0']"
finish
