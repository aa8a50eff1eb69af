#include "parallel/slice_weak.h"
#include "parallel/halo.h"
#include <string.h>

/* A constraint on its way to the slice of its range. */
typedef struct {
  int64_t id;
  pbng_weak_constraint c;
} numbered_constraint;

int pbng_balanced_owner(int64_t id, int64_t total, int size)
{
  int r = (int)((id * size) / total); /* a first guess, then the exact range */
  while (r > 0 && total * r / size > id) --r;
  while (r + 1 < size && total * (r + 1) / size <= id) ++r;
  return r;
}

PetscErrorCode pbng_slice_add_weak(MPI_Comm comm, pbng_mesh_slice *s, int64_t n, const pbng_weak_constraint *c)
{
  int rank, size, *dest;
  int64_t first = 0, added, nrecv;
  const int64_t nold = s->weak_end - s->weak_begin;
  numbered_constraint *send, *recv;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Exscan(&n, &first, 1, MPI_INT64_T, MPI_SUM, comm));
  if (rank == 0) first = 0; /* MPI_Exscan leaves rank 0's undefined */
  PetscCallMPI(MPI_Allreduce(&n, &added, 1, MPI_INT64_T, MPI_SUM, comm));
  const int64_t total = s->nglobal_weak + added;
  if (added == 0) PetscFunctionReturn(0);
  PetscCall(PetscMalloc2(nold + n + 1, &dest, nold + n + 1, &send));
  for (int64_t k = 0; k < nold + n; ++k) {
    send[k].id = k < nold ? s->weak_begin + k : s->nglobal_weak + first + k - nold;
    send[k].c = k < nold ? s->weak[k] : c[k - nold];
    dest[k] = pbng_balanced_owner(send[k].id, total, size);
  }
  PetscCall(pbng_send_items_to(comm, sizeof(numbered_constraint), nold + n, dest, send, &nrecv, (void **)&recv));
  PetscCall(PetscFree2(dest, send));
  PetscCall(PetscFree(s->weak));
  s->nglobal_weak = total, s->weak_begin = total * rank / size, s->weak_end = total * (rank + 1) / size;
  PetscCheck(nrecv == s->weak_end - s->weak_begin, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PRId64 " weak constraints for a range of %" PRId64, s->source,
             nrecv, s->weak_end - s->weak_begin);
  PetscCall(PetscMalloc1(nrecv + 1, &s->weak));
  for (int64_t k = 0; k < nrecv; ++k) s->weak[recv[k].id - s->weak_begin] = recv[k].c; /* sources in rank order: not in id order */
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}
