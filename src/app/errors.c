/* How a failed run ends on many ranks (errors.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "app/errors.h"

enum { ERROR_TEXT_LEN = 1024 }; /* longer messages are cut in the job's report */

int pbng_all_ranks_failed(MPI_Comm comm, double timeout)
{
  MPI_Request req;
  int done = 0;
  const double t0 = MPI_Wtime();

  if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) return 0;
  while (!done && MPI_Wtime() - t0 < timeout) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return 0;
    if (!done) nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  return done;
}

const char *pbng_error_text(PetscErrorCode ierr)
{
  const char *text = NULL;
  char *specific = NULL;
  PetscErrorMessage(ierr, &text, &specific);
  return specific && specific[0] ? specific : (text ? text : "unknown error");
}

void pbng_abort_alone(MPI_Comm comm, PetscErrorCode ierr, double timeout, const char *program)
{
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  fprintf(stderr, "%s: error on rank %d: %s\n%s: the other ranks did not stop within %g s (-failure_timeout): aborting the run\n", program, rank,
          pbng_error_text(ierr), program, timeout);
  fflush(stderr);
  MPI_Abort(comm, 1);
}

/* "ranks 1, 3, 4" (the first few of them, then how many more). */
static void format_ranks(const int *ranks, int n, char *buf, size_t len)
{
  size_t used = (size_t)snprintf(buf, len, "rank%s", n > 1 ? "s" : "");
  for (int k = 0; k < n && used < len; ++k) {
    if (k == 8) {
      snprintf(buf + used, len - used, " and %d more", n - k);
      return;
    }
    used += (size_t)snprintf(buf + used, len - used, "%s %d", k ? "," : "", ranks[k]);
  }
}

/* Whether rank r's gathered text is a message (not empty) that no lower rank reported. */
static int first_of_its_message(const char *texts, int r)
{
  const char *t = texts + (size_t)r * ERROR_TEXT_LEN;
  for (int q = 0; q < r; ++q)
    if (!strcmp(t, texts + (size_t)q * ERROR_TEXT_LEN)) return 0;
  return t[0] != 0;
}

/* Rank 0: each distinct message of the gathered texts once, in the order of the first rank that has it;
 * with the ranks that reported it unless it is the only message. */
static void print_distinct_messages(const char *texts, int size, const char *program)
{
  int distinct = 0, *ranks = (int *)malloc(sizeof(int) * (size_t)size);
  if (!ranks) { /* out of memory: rank 0's message only */
    fprintf(stderr, "%s: error: %s\n", program, texts);
    return;
  }
  for (int r = 0; r < size; ++r) distinct += first_of_its_message(texts, r);
  for (int r = 0; r < size; ++r) {
    const char *t = texts + (size_t)r * ERROR_TEXT_LEN;
    int n = 0;
    if (!first_of_its_message(texts, r)) continue;
    for (int q = r; q < size; ++q)
      if (!strcmp(t, texts + (size_t)q * ERROR_TEXT_LEN)) ranks[n++] = q;
    if (distinct == 1) fprintf(stderr, "%s: error: %s\n", program, t);
    else {
      char who[160];
      format_ranks(ranks, n, who, sizeof who);
      fprintf(stderr, "%s: error on %s: %s\n", program, who, t);
    }
  }
  free(ranks);
}

void pbng_report_errors(MPI_Comm comm, PetscErrorCode ierr, double timeout, const char *program)
{
  int rank = 0, size = 1;
  char mine[ERROR_TEXT_LEN] = "", *all = NULL;

  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (ierr != PBNG_ERR_ON_RANK0 || rank == 0) snprintf(mine, sizeof mine, "%s", pbng_error_text(ierr)); /* else rank 0 says why */
  if (size == 1) {
    fprintf(stderr, "%s: error: %s\n", program, mine);
    return;
  }
  if (!pbng_all_ranks_failed(comm, timeout)) pbng_abort_alone(comm, ierr, timeout, program); /* the others are still running */
  if (rank == 0 && !(all = (char *)calloc((size_t)size, ERROR_TEXT_LEN))) {
    fprintf(stderr, "%s: error: %s\n", program, mine);
    MPI_Abort(comm, 1);
  }
  MPI_Gather(mine, ERROR_TEXT_LEN, MPI_CHAR, all, ERROR_TEXT_LEN, MPI_CHAR, 0, comm);
  if (rank == 0) print_distinct_messages(all, size, program);
  free(all);
}
