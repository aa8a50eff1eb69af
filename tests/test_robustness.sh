#!/usr/bin/env bash
# Recovery and divergence (issue 7, as in the seed papers; issue 16: a flattened P3 cube, a P2 and a Q2 cube
# twisted twice): a box squashed flat and a fully inverted (mirrored) box recover their rest shape
# (corotated, stable neo-Hookean, neo-Hookean); two consecutive 90-degree twists and extreme motion with one
# iteration per frame stay finite and lower each frame's residual; a solver that diverges stops with an error
# naming the frame and iteration, keeps the frames before in the output (status attribute) and exits non-zero;
# a complete run says "complete"; a rank that fails alone makes every rank exit with a message instead of
# hanging; a full disk and a read-only directory (tmpfs mounts: the test runs as root, a failed mount is a
# failure) leave an earlier result intact; a file-size limit below the bound src/io/output.c documents
# (derived here from the mesh definition) is refused before any work, one above it lets the run finish.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# --- recovery from flat and inverted starts: a free, unloaded body's only equilibrium is its rest shape up to a rigid
# motion, so every distance between two nodes returns to its rest value (and every J to 1) -------------------
for m in corotated stable_neohookean neohookean; do
  for s in flat inverted; do
    "$PBNG" -scene box -res 6 -material "$m" -initial_state "$s" -frames 1 -iters 3000 -accel chebyshev -rtol 1e-10 -threads 1 \
      -output "$TMP/$m-$s.h5" > "$TMP/log" 2>&1 && ok || { fail "$m from $s"; cat "$TMP/log"; continue; }
    "$PY" - "$TMP/$m-$s.h5" <<'PYEOF' && ok || fail "$m from $s: rest shape not recovered"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
X, T, x0, x = f["mesh/rest_positions"][:], f["mesh/tetrahedra"][:], f["frames/000000/positions"][:], f["frames/000001/positions"][:]
vol = lambda P: np.linalg.det(np.stack([P[T[:, k]] - P[T[:, 0]] for k in (1, 2, 3)], axis=2))
d = lambda P: np.linalg.norm(P[:, None, :] - P[None, :, :], axis=2)
j0, j = vol(x0) / vol(X), vol(x) / vol(X)
assert j0.max() <= 1e-12, "the start should be flat or inverted: J max %g" % j0.max()
assert abs(j - 1).max() < 9e-10, "J after recovery: %g .. %g" % (j.min(), j.max())          # measured at most 2.9e-10
err = np.abs(d(x) - d(X)).max()
assert err < 1.8e-10, "distances after recovery differ from the rest ones by %g" % err  # measured at most 6.0e-11
PYEOF
  done
done
# --- high-order kinds (the seed's robustness tests): a flattened P3 cube recovers its rest shape (every
# distance between nodes, up to a rigid motion), and a P2 and a Q2 cube twisted twice by 90 degrees stay
# valid and converge (checked independently) ---------------------------------------------------------------
"$PBNG" -scene box -element tet20 -res 3 -material stable_neohookean -initial_state flat -frames 1 -iters 3000 -accel chebyshev -rtol 1e-10 \
  -threads 1 -output "$TMP/flat-p3.h5" > "$TMP/log" 2>&1 && ok || { fail "P3 from flat"; cat "$TMP/log"; }
"$PY" - "$TMP/flat-p3.h5" <<'PYEOF' && ok || fail "P3 from flat: rest shape not recovered"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
X, x0, x = f["mesh/rest_positions"][:], f["frames/000000/positions"][:], f["frames/000001/positions"][:]
d = lambda P: np.linalg.norm(P[:, None, :] - P[None, :, :], axis=2)
assert np.ptp(x0, axis=0).min() <= 1e-12, "the start should be flat"
err = np.abs(d(x) - d(X)).max()
assert err < 1.2e-10, "distances after recovery differ from the rest ones by %g" % err  # measured 3.7e-11
PYEOF
# (the Q2 cube is Res-3, 2 x 2 x 2 elements: Res-4 costs 20x the time and checks the same property)
twist2=(-scene box -material stable_neohookean -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1 -bc0_rotation_rate 1.5707963267948966
        -bc0_axis 1,0,0 -bc0_center 1,0.5,0.5 -dt 1 -frames 2 -rtol 1e-9 -iters 4000 -accel chebyshev -threads 1)
for how in "tet10 -res 4" "hex27 -res 3"; do
  el=${how%% *}
  # shellcheck disable=SC2086
  "$PBNG" "${twist2[@]}" -element $how -output "$TMP/twist-$el.h5" > "$TMP/log" 2>&1 && ok || { fail "$el: two 90-degree twists"; cat "$TMP/log"; }
  "$PY" "$HERE/check_output.py" "$TMP/twist-$el.h5" --max-relative-residual 1e-9 --quiet && ok || fail "$el: two twists: independent check"
done

# --- two consecutive 90-degree twists, converged (the default tolerance 1e-3, checked independently) and with
# one iteration per frame (-rtol 0: the one sweep must lower each frame's residual, relative residual < 1;
# measured 0.66, 0.55) ---------------------------------------------------------------------------------------
twist=(-scene box -res 6 -material stable_neohookean -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1 -bc0_rotation_rate 1.5707963267948966
       -bc0_axis 1,0,0 -bc0_center 1,0.5,0.5 -dt 1 -frames 2 -threads 1 -accel chebyshev)
"$PBNG" "${twist[@]}" -iters 400 -output "$TMP/twist400.h5" > "$TMP/log" 2>&1 && ok || { fail "two 90-degree twists, converged"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/twist400.h5" --max-relative-residual 1e-3 --quiet && ok || fail "two twists, converged: independent check"
"$PBNG" "${twist[@]}" -iters 1 -rtol 0 -output "$TMP/twist1.h5" > "$TMP/log" 2>&1 && ok || { fail "two 90-degree twists, one iteration"; cat "$TMP/log"; }
"$PY" "$HERE/check_output.py" "$TMP/twist1.h5" --max-relative-residual 1 --quiet && ok || fail "two twists, one iteration: independent check"
# extreme motion: the stretch-and-twist with frames 10x longer, one PBNG iteration per frame (-rtol 0: not the
# default multilevel cycle), every material; the sweep lowers every frame's residual (relative residual < 1:
# measured at most 0.75, 0.81, 0.80)
for m in corotated neohookean stable_neohookean; do
  "$PBNG" -scene box_stretch_twist -res 8 -material "$m" -dt 0.33 -frames 6 -iters 1 -rtol 0 -threads 1 -output "$TMP/extreme-$m.h5" > "$TMP/log" 2>&1 \
    && ok || { fail "extreme motion, $m"; cat "$TMP/log"; }
  "$PY" "$HERE/check_output.py" "$TMP/extreme-$m.h5" --frames 6 --max-relative-residual 1 --quiet && ok || fail "extreme motion, $m: independent check"
done

# --- divergence is an error with frame and iteration; the frames before are kept ---------------------
diverge() {
  local what=$1; shift
  local rc=0
  "$PBNG" -scene box_stretch_twist -res 8 -frames 3 -threads 1 "$@" -output "$TMP/div.h5" > "$TMP/log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && ok || fail "$what: diverged run exited 0"
  grep -qE "pbng: error: frame 1, iteration [0-9]+: the solution diverged" "$TMP/log" && ok || { fail "$what: message"; cat "$TMP/log"; }
  "$PY" "$HERE/check_output.py" "$TMP/div.h5" --quiet && ok || fail "$what: the kept output does not check"
  "$PY" -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r"); s = f.attrs["status"].decode(); assert s.startswith("diverged at frame 1, iteration") \
and f.attrs["frames_written"] == 1, s' "$TMP/div.h5" && ok || fail "$what: status attribute / frames kept"
}
diverge "PBD with contradictory neo-Hookean constraints" -solver pbd -iters 200
diverge "SOR with omega 1.999 (non-finite)" -accel sor -omega 1.999 -iters 200
diverge "SOR, monitored" -accel sor -omega 1.999 -iters 200 -monitor
# at_rest FILE: an unloaded, unconstrained box stays at its rest positions in every frame (its result)
at_rest() { "$PY" -c 'import h5py, sys, numpy as np; f = h5py.File(sys.argv[1], "r"); X = f["mesh/rest_positions"][()]; \
sys.exit(0 if len(f["frames"]) == 2 and all(np.array_equal(f["frames"][k]["positions"][()], X) for k in f["frames"]) else 1)' "$1"; }
"$PBNG" -scene box -res 4 -frames 1 -iters 2 -output "$TMP/ok.h5" > /dev/null 2>&1 && "$PY" -c 'import h5py, sys; \
assert h5py.File(sys.argv[1], "r").attrs["status"] == b"complete"' "$TMP/ok.h5" && ok || fail "a complete run's status attribute"
at_rest "$TMP/ok.h5" && ok || fail "a complete run: the unloaded box moved"
# --- a rank that fails alone makes every rank exit (no hang): bounded by `timeout`; the others wait
# -failure_timeout (0.5 s) for it before it aborts the run ---------------------------------------------------
: "${MPIEXEC:=mpiexec}"
for at in setup iteration; do
  rc=0
  timeout 120 "$MPIEXEC" -n 3 --oversubscribe --bind-to none "$PBNG" -scene box_stretch_twist -res 8 -frames 2 -threads 1 -failure_timeout 0.5 \
    -test_fail_rank 1 -test_fail_at "$at" -output "$TMP/alone.h5" > "$TMP/log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && ok || { fail "rank 1 failing alone during $at: exit status $rc (124: hung)"; cat "$TMP/log"; }
  grep -q "pbng: error on rank 1: test failure on rank 1 during $at" "$TMP/log" && grep -q "aborting the run" "$TMP/log" && ok \
    || { fail "rank 1 failing alone during $at: message"; cat "$TMP/log"; }
  ls "$TMP"/alone.h5* > /dev/null 2>&1 && fail "rank 1 failing alone during $at: output left behind" || ok
done
# --- a full disk: a small tmpfs. The test runs as root (CI, ctest here); a tmpfs that cannot be mounted is a
# failure with mount's reason, not a skip ---------------------------------------------------------------------
SMALL="$TMP/small"
mkdir -p "$SMALL"
if why=$(mount -t tmpfs -o size=600k tmpfs "$SMALL" 2>&1); then
  "$PBNG" -scene box -res 4 -frames 1 -iters 2 -output "$SMALL/r.h5" > /dev/null 2>&1 && ok || fail "full disk: the small result"
  at_rest "$SMALL/r.h5" && ok || fail "full disk: the small result: the unloaded box moved"
  before=$(md5sum < "$SMALL/r.h5")
  expect_error "full disk" "file write failed" "$PBNG" -scene box_stretch_twist -res 16 -frames 5 -rtol 0 -iters 1 -threads 1 -output "$SMALL/r.h5"
  [ "$(md5sum < "$SMALL/r.h5")" = "$before" ] && [ ! -e "$SMALL/r.h5.partial" ] && ok || fail "full disk: the earlier result changed or a partial file remained"
  umount "$SMALL"
else
  fail "full disk: cannot mount a 600k tmpfs on $SMALL (the test needs root): $why"
fi
# --- an output directory that is not writable: a read-only tmpfs (root ignores permission bits) ------
RO="$TMP/readonly"
mkdir -p "$RO"
if why=$(mount -t tmpfs -o ro,size=64k tmpfs "$RO" 2>&1); then
  expect_error "read-only output directory" "directory '$RO' is not writable" "$PBNG" -scene box -res 4 -frames 1 -output "$RO/r.h5"
  umount "$RO"
else
  fail "read-only output directory: cannot mount a read-only tmpfs on $RO (the test needs root): $why"
fi
# --- a file-size limit (ulimit -f) below what the result may need: refused before any work ---------------
# The bound is src/io/output.c's file_bytes_needed on counts taken from the mesh definition, not from pbng:
# a Res-N box has N^3 nodes and 5 (N-1)^3 tetrahedra (docs/options.md), -frames F writes F + 1 frames. Data:
# rest positions (24 B), color and partition (4 + 4 B) per node, 4 node indices (8 B each) per tetrahedron,
# F + 1 position arrays (24 B a node); fixed nodes at most 8 B a node; HDF5 metadata 64 KiB + 4 KiB a frame.
# A Res-16 box (4 096 nodes): the property, not a scale, is checked.
N=16 F=3
nodes=$((N * N * N)) tets=$((5 * (N - 1) * (N - 1) * (N - 1)))
data=$((nodes * 32 + tets * 4 * 8 + (F + 1) * nodes * 24))
bound=$((data + nodes * 8 + 65536 + 4096 * (F + 1)))
# (an isolated MPI singleton: the Open MPI daemon a singleton starts otherwise writes PMIx files under the same
# small limit and aborts the start)
big=(env OMPI_MCA_ess_singleton_isolated=1 "$PBNG" -scene box_stretch_twist -res $N -frames $F -iters 2 -rtol 0 -threads 1 -output "$TMP/big.h5")
expect_error "ulimit -f below the result" "the file-size limit (ulimit -f) is $((data / 2048 * 1024)) bytes, below the $bound bytes the file may need" \
  bash -c 'ulimit -f "$1" && exec "${@:2}"' - $((data / 2048)) "${big[@]}"
# a limit 2 % above the bound lets the run finish: the file has the counts above and is no larger than the bound;
# one PBNG sweep a frame lowers each frame's residual (relative residual < 1; measured 0.38, 0.49, 0.56)
if bash -c 'ulimit -f "$1" && exec "${@:2}"' - $((bound * 102 / 100 / 1024)) "${big[@]}" > "$TMP/big.log" 2>&1; then ok; else
  fail "ulimit -f 2 % above the bound: the run should finish"; tail -3 "$TMP/big.log"
fi
size=$(stat -c %s "$TMP/big.h5" 2> /dev/null || echo 0)
[ "$size" -le "$bound" ] && [ "$size" -gt "$data" ] && ok || fail "the result's $size bytes are not within ($data, $bound]"
"$PY" - "$TMP/big.h5" "$nodes" "$tets" "$F" <<'PYEOF' && ok || fail "the result's datasets do not have the counts the bound assumed"
import sys, h5py
f, nodes, tets, frames = h5py.File(sys.argv[1], "r"), *map(int, sys.argv[2:])
assert f["mesh/rest_positions"].shape == (nodes, 3) and f["mesh/tetrahedra"].shape == (tets, 4), (f["mesh/rest_positions"].shape, f["mesh/tetrahedra"].shape)
assert sorted(f["frames"]) == ["%06d" % k for k in range(frames + 1)], sorted(f["frames"])
assert all(list(f["frames"][k]) == ["positions"] for k in f["frames"]), "frame fields beyond the positions"
assert f["mesh/fixed_nodes"].shape[0] <= nodes
PYEOF
"$PY" "$HERE/check_output.py" "$TMP/big.h5" --frames $F --max-relative-residual 1 --quiet && ok || fail "ulimit -f above the bound: independent check"
# a limit above the data but below the written file (metadata and fixed nodes included) is refused too:
# crossed only as the file is closed, it would crash HDF5 1.10
expect_error "ulimit -f between the data and the file" "below the $bound bytes the file may need" \
  bash -c 'ulimit -f "$1" && exec "${@:2}"' - $(((data + size) / 2 / 1024)) "${big[@]}"
[ $(((data + size) / 2 / 1024 * 1024)) -gt "$data" ] && ok || fail "the limit between the data and the file is not above the data"
expect_error "-divergence_limit 1" "must be > 1" "$PBNG" -scene box -res 4 -divergence_limit 1 -output "$TMP/bad.h5"
expect_error "-initial_state unknown" "-initial_state: unknown state" "$PBNG" -scene box -res 4 -initial_state upside_down -output "$TMP/bad.h5"
finish
