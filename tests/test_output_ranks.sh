#!/usr/bin/env bash
# tests/test_output.c (the result file's writers, frame fields included) on 2 and 3 ranks (oversubscribed):
# rows split into non-contiguous runs, elements and nodes on different ranks.
source "$(dirname "$0")/lib.sh"
# Open MPI: the ob1 transport (no PSM/OFI probing at start-up: 0.4 s a process here), no daemon for a 1-rank run,
# ranks that wait yield their core (the tests share the machine's cores), and a failed job's ranks killed at once
# (mpiexec otherwise waits 1 s after SIGTERM even when they have all exited)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
unit_on_ranks test_output "2 3"
finish
