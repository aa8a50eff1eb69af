#!/usr/bin/env bash
# The global unknown numbering of tests/test_assembly.c on 2, 3 and 4 ranks (oversubscribed).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
unit_on_ranks test_assembly "2 3 4"
finish
