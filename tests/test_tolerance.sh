#!/usr/bin/env bash
# A frame's end by tolerance, reported (issue 21 item 1, first part; docs/options.md#stopping):
#  - -rtol reached: every frame line says "converged", the summary "every frame reached it", each frame's
#    attribute converged = 1, the JSON summary capped_frames 0;
#  - -rtol not reached within -iters: "NOT converged", converged = 0, the summary and JSON count them;
#  - -strict: the first such frame is an error (exit != 0, the message names frame and residual), the output keeps
#    frames 0..K with its status attribute saying where it stopped; -strict without a tolerance is refused;
#  - without -rtol (fixed iterations) converged = -1 and the lines carry no marker.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
box=(-scene box_stretch_twist -res 6 -frames 3 -threads 1)
attrs() { "$PY" -c 'import sys, h5py; f = h5py.File(sys.argv[1], "r"); print(" ".join(str(int(f["frames"][k].attrs["converged"])) for k in sorted(f["frames"])))' "$1"; }
json() { "$PY" -c 'import sys, json; d = json.load(open(sys.argv[1])); print(d["capped_frames"], d["tolerance"])' "$1"; }

"$PBNG" "${box[@]}" -rtol 1e-3 -iters 500 -summary "$TMP/ok.json" -output "$TMP/ok.h5" > "$TMP/ok.log" 2>&1 && ok || { fail "run to -rtol"; cat "$TMP/ok.log"; }
[ "$(grep -c '^frame .* converged$' "$TMP/ok.log")" = 3 ] && ok || fail "not every frame line says converged: $(grep '^frame' "$TMP/ok.log")"
grep -q "tolerance -rtol 0.001: every frame reached it" "$TMP/ok.log" && ok || fail "summary: $(grep tolerance "$TMP/ok.log")"
[ "$(attrs "$TMP/ok.h5")" = "1 1 1 1" ] && ok || fail "converged attributes $(attrs "$TMP/ok.h5")"
[ "$(json "$TMP/ok.json")" = "0 0.001" ] && ok || fail "JSON: $(json "$TMP/ok.json")"

"$PBNG" "${box[@]}" -rtol 1e-8 -iters 20 -summary "$TMP/cap.json" -output "$TMP/cap.h5" > "$TMP/cap.log" 2>&1 && ok || { fail "capped run"; cat "$TMP/cap.log"; }
[ "$(grep -c '^frame .*NOT converged$' "$TMP/cap.log")" = 3 ] && ok || fail "capped frames not marked: $(grep '^frame' "$TMP/cap.log")"
grep -q "tolerance -rtol 1e-08: 3 of 3 frames stopped before it" "$TMP/cap.log" && ok || fail "summary: $(grep tolerance "$TMP/cap.log")"
[ "$(attrs "$TMP/cap.h5")" = "1 0 0 0" ] && ok || fail "converged attributes $(attrs "$TMP/cap.h5")"
[ "$(json "$TMP/cap.json")" = "3 1e-08" ] && ok || fail "JSON: $(json "$TMP/cap.json")"

rc=0; "$PBNG" "${box[@]}" -rtol 1e-8 -iters 20 -strict -output "$TMP/strict.h5" > "$TMP/strict.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && ok || fail "-strict: a capped frame did not fail the run"
grep -q "error: -strict: frame 1 stopped after 20 iterations at relative residual" "$TMP/strict.log" && ok || fail "-strict message: $(tail -2 "$TMP/strict.log")"
"$PY" - "$TMP/strict.h5" <<'PYEOF' && ok || fail "-strict: the output does not keep frames 0..1 with its status"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
status = f.attrs["status"].decode() if isinstance(f.attrs["status"], bytes) else str(f.attrs["status"])
print(sorted(f["frames"]), status)
sys.exit(0 if sorted(f["frames"]) == ["000000", "000001"] and status.startswith("stopped at frame 1: -strict") else 1)
PYEOF
expect_error "-strict without -rtol" "-strict needs a tolerance" "$PBNG" "${box[@]}" -strict -output "$TMP/bad.h5"

"$PBNG" "${box[@]}" -output "$TMP/fixed.h5" > "$TMP/fixed.log" 2>&1 && ok || fail "fixed iterations"
[ "$(attrs "$TMP/fixed.h5")" = "-1 -1 -1 -1" ] && ok || fail "fixed iterations: converged attributes $(attrs "$TMP/fixed.h5")"
grep -q "converged" "$TMP/fixed.log" && fail "fixed iterations: a converged marker" || ok
finish
