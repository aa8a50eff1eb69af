#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer: builds pbng, pbng-partition
# and the tests with -DPBNG_SANITIZE=ON (Debug) in <build>/sanitize, then runs the other tests there
# (MPI tests included; not the Slurm test, which exercises the job scripts, nor test_dataset, which drives
# ~40 small pbng runs through the data-set tool (their code paths are the other tests'), not test_fuzz, whose
# harnesses are built with ASan + UBSan already, nor this one, nor test_bar_fold — 240 frames of self-contact
# on 1 and 2 ranks, ~3 min under the sanitizers, whose detection and contact code test_contact,
# test_contact_detect and test_sheet_contact run there — nor those labelled "numerics" in
# tests/CMakeLists.txt: rank/thread independence and convergence studies, which run at other sizes
# and rank counts the code paths the other tests run, and would add ~40 % to CI's time). Any
# sanitizer report makes the program fail and so its test, leaks at exit included: the MPI runtime's
# own allocations are suppressed by tests/lsan.supp, which can name them because the sanitizer build
# keeps its plugins loaded (tests/keep_plugins.c). The first run builds (~3 min on 2 cores).
source "$(dirname "$0")/lib.sh"
REPO="$(cd "$HERE/.." && pwd)"
SAN="${PBNG_SANITIZE_BUILD:-$(cd "$(dirname "$PBNG")/.." && pwd)/sanitize}"
# -O1 (with debug information): ASan's recommended level, ~1.8x faster than -O0 here (test_problem:
# 154 s against 268 s), so the suite under the sanitizers fits CI's time.
if ! cmake -S "$REPO" -B "$SAN" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DPBNG_SANITIZE=ON > "$TMP/configure.log" 2>&1; then
  fail "configure the sanitizer build"; tail -20 "$TMP/configure.log"; finish
fi
if ! cmake --build "$SAN" -j2 > "$TMP/build.log" 2>&1; then
  fail "build with -DPBNG_SANITIZE=ON"; grep -E "error|warning" "$TMP/build.log" | head -20; finish
fi
grep -q "warning:" "$TMP/build.log" && { fail "the sanitizer build has warnings"; grep "warning:" "$TMP/build.log" | head; } || ok
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0
export LSAN_OPTIONS="suppressions=$HERE/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if ctest --test-dir "$SAN" -j2 -E "test_slurm|test_dataset|test_sanitizers|test_fuzz|test_bar_fold" -LE numerics --output-on-failure > "$TMP/ctest.log" 2>&1; then
  ok
else
  fail "tests under the sanitizers"; grep -E "Failed|ERROR: (Address|Leak)Sanitizer|leak of|runtime error|SUMMARY" "$TMP/ctest.log" | head -30
fi
grep -E "tests passed|Total Test time" "$TMP/ctest.log"
finish
