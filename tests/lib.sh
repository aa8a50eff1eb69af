# Shared helpers for the shell tests (sourced). Env from tests/CMakeLists.txt: PBNG, PBNG_TEST_TMP, PBNG_TEST_DATA.
set -euo pipefail
: "${PBNG:?PBNG must point to the pbng executable}"
TMP="${PBNG_TEST_TMP:-/tmp/pbng-tests}/$(basename "$0" .sh)"
rm -rf "$TMP" && mkdir -p "$TMP"
PY=/usr/bin/python3
HERE="$(cd "$(dirname "$0")" && pwd)"
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }
# output_family PATH: checksums of every file named like PATH's stem (PATH itself, .xdmf, .partial,
# .checkpoint.h5, ...) in PATH's directory; used to show that a failed run created or changed none.
output_family() {
  local dir stem
  dir=$(dirname "$1"); stem=$(basename "${1%.h5}")
  [ -d "$dir" ] || return 0
  find "$dir" -maxdepth 1 -name "$stem*" -type f -print0 | sort -z | xargs -0 -r md5sum
}
# expect_error "what" "message substring" cmd...: the command must exit non-zero, print the message,
# and leave the files under its -output argument (if any) exactly as they were: none created, none
# changed (an earlier result stays intact, no .partial is left).
expect_error() {
  local what="$1" msg="$2"; shift 2
  local out rc=0 output="" prev="" before after a
  for a in "$@"; do
    if [ "$prev" = "-output" ]; then output="$a"; fi
    prev="$a"
  done
  [ -n "$output" ] && before=$(output_family "$output")
  out=$("$@" 2>&1) || rc=$?
  if [ $rc -eq 0 ]; then fail "$what: exited 0"; return; fi
  if ! grep -qF -- "$msg" <<<"$out"; then fail "$what: message lacks '$msg': $out"; return; fi
  if [ -n "$output" ]; then
    after=$(output_family "$output")
    if [ "$before" != "$after" ]; then
      fail "$what: files under $output changed: before [$before] after [$after]"; return
    fi
  fi
  ok
}
# mpi N cmd...: cmd on N ranks (oversubscribed and unbound: the tests share the machine's cores).
mpi() { "${MPIEXEC:-mpiexec}" -n "$1" --oversubscribe --bind-to none "${@:2}"; }
# pbng_on N pbng-options...: pbng on N ranks, one thread each.
pbng_on() { local n=$1; shift; mpi "$n" "$PBNG" -threads 1 "$@"; }
# same A B WHAT: results A and B have bitwise the same positions (the partitioning tests: a run against the METIS run).
same() { "$PY" "$HERE/check_output.py" "$1" --compare "$2" --rtol 0 --quiet && ok || fail "$3: positions differ from the METIS run's"; }
# unit_on_ranks PROGRAM "N1 N2 ...": the unit-test program tests/PROGRAM.c on each rank count (mpi), its log
# in $TMP/logN; a failure fails the test and shows the log.
unit_on_ranks() {
  local n
  for n in $2; do
    mpi "$n" "$PBNG_TEST_BIN/$1" > "$TMP/log$n" 2>&1 && ok || { fail "$1 on $n ranks"; cat "$TMP/log$n"; }
  done
}
# run NAME pbng-options...: pbng writing $TMP/NAME.h5 and $TMP/NAME.log; a pass, or a failure showing the log.
run() { local out="$1"; shift; "$PBNG" "$@" -output "$TMP/$out.h5" > "$TMP/$out.log" 2>&1 && ok || { fail "$out: $*"; cat "$TMP/$out.log"; }; }
# compare A B RTOL: $TMP/A.h5's positions equal $TMP/B.h5's to RTOL (check_output.py --compare; 0: bitwise).
compare() { "$PY" "$HERE/check_output.py" "$TMP/$1.h5" --compare "$TMP/$2.h5" --rtol "$3" --quiet && ok || fail "$1 vs $2: positions differ by more than $3"; }
# stop_and_restart TAG RANKS AFTER pbng-options...: a run stopped by -test_signal_after AFTER (exit 85, a checkpoint
# mid-frame) and continued with -restart auto equals the uninterrupted run bitwise.
stop_and_restart() {
  local tag=$1 ranks=$2 after=$3 rc=0; shift 3
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.full.h5" > "$TMP/$tag.full.log" 2>&1 || { fail "$tag: uninterrupted run"; cat "$TMP/$tag.full.log"; return; }
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -test_signal_after "$after" > "$TMP/$tag.1.log" 2>&1 || rc=$?
  [ "$rc" = 85 ] && ok || { fail "$tag: stopped run exited $rc, not 85"; cat "$TMP/$tag.1.log"; return; }
  mpi "$ranks" "$PBNG" "$@" -output "$TMP/$tag.h5" -restart auto > "$TMP/$tag.2.log" 2>&1 && ok || { fail "$tag: restart"; cat "$TMP/$tag.2.log"; return; }
  compare "$tag" "$tag.full" 0
}
# check NAME check_output-options...: the independent checker on $TMP/NAME.h5.
check() { "$PY" "$HERE/check_output.py" "$TMP/$1.h5" --quiet "${@:2}" && ok || fail "$1: independent check ${*:2}"; }
# run_on_ranks NAME "R1 R2 ..." ARGS...: pbng ARGS on each rank count (mpiexec, one process per rank
# unbound), writing $TMP/NAME.R.h5 and its log $TMP/NAME.R.log; a failed run fails the test and shows its log.
run_on_ranks() {
  local name="$1" ranks
  for ranks in $2; do
    mpi "$ranks" "$PBNG" "${@:3}" -output "$TMP/$name.$ranks.h5" > "$TMP/$name.$ranks.log" 2>&1 \
      && ok || { fail "$name on $ranks rank(s)"; cat "$TMP/$name.$ranks.log"; }
  done
}
# skip REASON: the test cannot run because an optional tool is not installed (bash .ci/install-deps --tests installs
# every one): reported as skipped (exit 77, ctest's SKIP_RETURN_CODE, listed at the end of ctest's output). In CI
# (CI=true), where every tool is installed, a skip is a failure with its reason. Only for a missing tool: a tool
# that is installed but does not work (a daemon that does not start, a mount refused) is a failure (fail).
skip() {
  if [ "${CI:-}" = true ]; then fail "CI installs every tool, so this cannot be skipped: $*"; finish || exit 1; fi
  echo "$(basename "$0" .sh): SKIPPED: $*"
  exit 77
}
finish() {
  echo "$(basename "$0" .sh): $passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
# frames_converged RTOL ATOL FILE...: every frame >= 1 of each result has relative residual <= RTOL or residual <= ATOL
# (a scene's -rtol and its absolute floor; frames that start at equilibrium have relative residual 1). The stored
# residuals are the ones `check` (tests/check_output.py) recomputes and compares: run it on the files first.
frames_converged() {
  "$PY" - "$@" <<'EOF'
import sys, h5py
rtol, atol = float(sys.argv[1]), float(sys.argv[2])
bad = []
for path in sys.argv[3:]:
    f = h5py.File(path, "r")
    for k in sorted(f["frames"])[1:]:
        a = f["frames"][k].attrs
        if not (a["relative_residual"] <= rtol or a["residual"] <= atol):
            bad.append(f"{path} frame {k}: relative residual {a['relative_residual']:.3e}, residual {a['residual']:.3e}")
print("\n".join(bad) if bad else f"{len(sys.argv) - 3} runs: every frame at relative residual {rtol:g} or residual {atol:g}")
sys.exit(1 if bad else 0)
EOF
}

# substeps_match A B EVERY TOL: frame k of result A against frame EVERY*k of result B (the same times: a solver's
# substeps of h = dt/EVERY against Newton's steps of h), largest position difference relative to B's largest |x|
# below TOL; B has EVERY times as many frames as A. Prints the difference.
substeps_match() {
  "$PY" - "$@" <<'EOF'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
every, tol = int(sys.argv[3]), float(sys.argv[4])
fa, fb = sorted(a["frames"]), sorted(b["frames"])
assert len(fa) >= 2 and len(fb) == every * (len(fa) - 1) + 1, (len(fa), len(fb))
worst = 0.0
for k in range(1, len(fa)):
    ga, gb = a["frames"][fa[k]], b["frames"][fb[every * k]]
    assert abs(ga.attrs["time"] - gb.attrs["time"]) < 1e-12, (ga.attrs["time"], gb.attrs["time"])
    worst = max(worst, np.abs(ga["positions"][()] - gb["positions"][()]).max() / np.abs(gb["positions"][()]).max())
print("%d frames, largest difference from the steps of h %.3e (relative)" % (len(fa) - 1, worst))
sys.exit(0 if worst < tol else 1)
EOF
}

# positions of the last frames of two results: max difference relative to the object's extent
last_frames_agree() { # A B TOL
  "$PY" - "$1" "$2" "$3" <<'EOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
xa = a["frames"][sorted(a["frames"])[-1]]["positions"][...]
xb = b["frames"][sorted(b["frames"])[-1]]["positions"][...]
rest = a["mesh/rest_positions"][...]
d = np.abs(xa - xb).max() / (rest.max(axis=0) - rest.min(axis=0)).max()
print(f"difference {d:.3e}")
sys.exit(0 if d <= float(sys.argv[3]) else 1)
EOF
}

# set_after FILE (plasticity tests): the largest |x - X| at the last frame, and the largest |eps_p| there
set_after() { "$PY" -c 'import h5py, sys, numpy as np
f = h5py.File(sys.argv[1], "r"); X = f["mesh/rest_positions"][()]; last = sorted(f["frames"].keys())[-1]; g = f["frames/" + last]
ep = g["plastic_strain"][()] if "plastic_strain" in g else np.zeros((1, 6))
print(np.abs(g["positions"][()] - X).max(), np.sqrt((ep[:, :3] ** 2).sum(1) + 2 * (ep[:, 3:] ** 2).sum(1)).max())' "$1"; }
