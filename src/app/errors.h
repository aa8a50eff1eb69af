/* How a failed run ends on many ranks: agreement that every rank failed, then one report for the job. */
#ifndef PBNG_APP_ERRORS_H
#define PBNG_APP_ERRORS_H

#include <petscsys.h>

/* Error code of a rank whose setup stopped because rank 0 failed (rank 0 reports the cause). */
#define PBNG_ERR_ON_RANK0 PETSC_ERR_USER

/* Default of -failure_timeout: seconds a rank that failed waits for the others to fail too. */
#define PBNG_FAILURE_TIMEOUT_DEFAULT 20.0

/* After an error: whether every rank of comm reached its error path within `timeout` seconds (then the
 * error is collective and the ranks can clean up and report together). A rank that failed alone would
 * otherwise wait in the cleanup's collective calls, and the others in theirs, forever. */
int pbng_all_ranks_failed(MPI_Comm comm, double timeout);

/* The error ierr of this rank as text: PETSc's specific message, else its generic one. */
const char *pbng_error_text(PetscErrorCode ierr);

/* This rank failed alone (the others did not reach their error path within `timeout` seconds): prints
 * its message naming the rank and aborts every rank (MPI_Abort, exit status 1). */
void pbng_abort_alone(MPI_Comm comm, PetscErrorCode ierr, double timeout, const char *program);

/* Reports a run's errors once for the job instead of once per rank: after every rank agreed
 * (pbng_all_ranks_failed) rank 0 prints each distinct message once, naming the ranks when they differ.
 * If some rank did not fail within `timeout`, this rank prints its own message and aborts every rank. */
void pbng_report_errors(MPI_Comm comm, PetscErrorCode ierr, double timeout, const char *program);

#endif
