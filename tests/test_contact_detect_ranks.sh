#!/usr/bin/env bash
# Contact detection (tests/test_contact_detect.c) on 3 ranks: every check passes there too (the
# records equal the serial brute force's), and the records' digests (everything but local indices
# and owner ranks, gathered by vertex) equal those of the 1-rank run, scenario by scenario.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
unit_on_ranks test_contact_detect "1 3"
for n in 1 3; do
  grep '^digest ' "$TMP/log$n" | sed 's/; broad-phase.*//' > "$TMP/digest$n" || true
done
if [ -s "$TMP/digest1" ] && diff "$TMP/digest1" "$TMP/digest3" > "$TMP/diff"; then ok
else fail "records differ between 1 and 3 ranks (or none were printed)"; cat "$TMP/diff"; fi
finish
