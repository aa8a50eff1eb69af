#!/usr/bin/env bash
# tests/test_output.c (the result file's writers, frame fields included) on 2 and 3 ranks (oversubscribed):
# rows split into non-contiguous runs, elements and nodes on different ranks.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
unit_on_ranks test_output "2 3"
finish
