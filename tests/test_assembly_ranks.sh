#!/usr/bin/env bash
# The global unknown numbering of tests/test_assembly.c on 2, 3 and 4 ranks (oversubscribed).
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
for n in 2 3 4; do
  if "$MPIEXEC" -n $n --oversubscribe --bind-to none "$PBNG_TEST_BIN/test_assembly" > "$TMP/log" 2>&1; then ok
  else fail "test_assembly on $n ranks"; cat "$TMP/log"; fi
done
finish
