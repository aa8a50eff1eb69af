#!/usr/bin/env bash
# Fuzzing (libFuzzer, clang from Debian): the Gmsh and TetGen readers and the option parser, each for a
# fixed number of runs (30 000 / 30 000 / 200 000: ~32 / 24 / 45 s at the rates measured on the shared 2-core machine beside the
# rest of the suite, 2026-11-27; the seeds' high-order meshes make a Gmsh run ~1 ms; FUZZ_RUNS_* override) with a fixed seed
# (FUZZ_SEED, default 1: CI explores the same inputs every time, so its outcome does not depend on
# luck; give another seed or more runs for a longer campaign), from a seed corpus of valid inputs
# (tests/data, tests/fuzz/seeds_options), after replaying the regression inputs of earlier findings
# (tests/data/fuzz/). Any crash, sanitizer
# report, per-input leak or hang (> 10 s for one input) fails; the reproducer is kept in the test
# directory and printed in base64, to be added to tests/data/fuzz/. Builds <build>/fuzz with
# CC=clang -DPBNG_FUZZ=ON; installs libfuzzer-14-dev when missing (root), else reports the test skipped (exit 77;
# a failure in CI, where .ci/install-deps --tests installs it).
source "$(dirname "$0")/lib.sh"
REPO="$(cd "$HERE/.." && pwd)"
FZ="${PBNG_FUZZ_BUILD:-$(cd "$(dirname "$PBNG")/.." && pwd)/fuzz}"
SEED=${FUZZ_SEED:-1}
declare -A RUNS=([gmsh]=${FUZZ_RUNS_GMSH:-30000} [tetgen]=${FUZZ_RUNS_TETGEN:-30000} [options]=${FUZZ_RUNS_OPTIONS:-200000})
libfuzzer_ok() { echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$TMP/t.c" && clang -fsanitize=fuzzer "$TMP/t.c" -o "$TMP/t" 2> /dev/null; }
if ! libfuzzer_ok; then
  [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libfuzzer-14-dev > "$TMP/apt.log" 2>&1
  libfuzzer_ok || skip "clang with libFuzzer is not available and cannot be installed here"
fi
CC=clang cmake -S "$REPO" -B "$FZ" -DCMAKE_BUILD_TYPE=Debug -DPBNG_FUZZ=ON > "$TMP/configure.log" 2>&1 || { fail "configure"; tail "$TMP/configure.log"; finish; }
cmake --build "$FZ" -j2 --target fuzz_gmsh fuzz_tetgen fuzz_options > "$TMP/build.log" 2>&1 || { fail "build"; grep error "$TMP/build.log" | head; finish; }
# leaks are checked per input (libFuzzer's -detect_leaks); the MPI runtime's own allocations are
# suppressed by tests/lsan.supp, which can name them because the harnesses keep its plugins loaded
# (tests/keep_plugins.c). The regression inputs are replayed with a leak check at exit as well, so
# that a leak shows on every run, not only when libFuzzer's allocation count happens to trigger a check.
LSAN_COMMON="suppressions=$HERE/lsan.supp:print_suppressions=0"
export LSAN_OPTIONS="leak_check_at_exit=0:$LSAN_COMMON" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# seeds: the valid meshes, every element kind (sheets too) (and for TetGen each .node, 0xff, .ele pair); regression inputs first
mkdir -p "$TMP/gmsh" "$TMP/tetgen" "$TMP/options" "$TMP/crashes"
cp "$PBNG_TEST_DATA"/cube_*.msh "$PBNG_TEST_DATA"/tiny_*.msh "$TMP/gmsh/"
for k in tet10 tet20 hex8 hex27 prism6 pyramid5; do cp "$PBNG_TEST_DATA/${k}_v22_ascii.msh" "$PBNG_TEST_DATA/${k}_v41_binary.msh" "$TMP/gmsh/"; done
cp "$PBNG_TEST_DATA"/sheet_square_v22_ascii.msh "$PBNG_TEST_DATA"/sheet_block_v41_binary.msh "$TMP/gmsh/" # sheets: triangles as elements
for b in cube tet10 tet10_box; do cat "$PBNG_TEST_DATA/$b.node" <(printf '\377') "$PBNG_TEST_DATA/$b.ele" > "$TMP/tetgen/$b"; done
cp "$HERE"/fuzz/seeds_options/* "$TMP/options/"
for target in gmsh tetgen options; do
  regress=("$PBNG_TEST_DATA"/fuzz/"$target"-*)
  if [ -e "${regress[0]}" ]; then
    LSAN_OPTIONS="leak_check_at_exit=1:$LSAN_COMMON" "$FZ/bin/fuzz_$target" "${regress[@]}" > "$TMP/regress-$target.log" 2>&1 && ok || { fail "$target: a regression input fails again"; tail -30 "$TMP/regress-$target.log"; }
  fi
  ( cd "$TMP/crashes" && "$FZ/bin/fuzz_$target" "$TMP/$target" -seed="$SEED" -runs="${RUNS[$target]}" -timeout=10 -rss_limit_mb=4096 \
      > "$TMP/fuzz-$target.log" 2>&1 ) && ok || {
    fail "$target: libFuzzer found a problem (reproducer in $TMP/crashes)"
    grep -E "ERROR|leak of|runtime error|#[0-9] " "$TMP/fuzz-$target.log" | head -25
    grep -E "^Base64" "$TMP/fuzz-$target.log"
  }
  grep -h "^Done" "$TMP/fuzz-$target.log" | sed "s/^/  $target: /"
done
finish
