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
# expect_error "what" "message substring" cmd...: the command must exit non-zero, print the message,
# and leave no output file (the -output argument, if any) behind.
expect_error() {
  local what="$1" msg="$2"; shift 2
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [ $rc -eq 0 ]; then fail "$what: exited 0"; return; fi
  if ! grep -qF -- "$msg" <<<"$out"; then fail "$what: message lacks '$msg': $out"; return; fi
  ok
}
finish() {
  echo "$(basename "$0" .sh): $passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
