#include "parallel/halo.h"
#include "core/sorted_ids.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Local index of an owned global id (binary search in the sorted owned table), or -1. */
static int32_t owned_local(const pbng_id_local *table, int32_t n, int64_t gid)
{
  int32_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (table[mid].id == gid) return table[mid].local;
    if (table[mid].id < gid) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Ghost requests: ghosts are ordered by (owner, global id) in the dmesh, so each owner's block is
 * contiguous; every rank learns which of its owned nodes each other rank needs, by local index. */
PetscErrorCode pbng_ghost_plan_create(const pbng_dmesh *dm, pbng_ghost_plan *p)
{
  const int size = dm->size;
  const int32_t nghost = dm->nlocal - dm->nowned;
  int64_t *wanted, *given;
  pbng_id_local *table;

  PetscFunctionBeginUser;
  memset(p, 0, sizeof(*p));
  p->comm = dm->comm, p->size = size, p->nowned = dm->nowned;
  PetscCall(PetscCalloc4(size, &p->want_count, size + 1, &p->want_displ, size, &p->give_count, size + 1, &p->give_displ));
  for (int32_t g = 0; g < nghost; ++g) p->want_count[dm->ghost_owner[g]]++;
  PetscCallMPI(MPI_Alltoall(p->want_count, 1, MPI_INT, p->give_count, 1, MPI_INT, dm->comm));
  for (int r = 0; r < size; ++r) p->want_displ[r + 1] = p->want_displ[r] + p->want_count[r], p->give_displ[r + 1] = p->give_displ[r] + p->give_count[r];
  PetscCall(PetscMalloc1(nghost + 1, &wanted));
  PetscCall(PetscMalloc1(p->give_displ[size] + 1, &given));
  for (int32_t g = 0; g < nghost; ++g) wanted[g] = dm->global_node[dm->nowned + g];
  PetscCallMPI(MPI_Alltoallv(wanted, p->want_count, p->want_displ, MPI_INT64_T, given, p->give_count, p->give_displ, MPI_INT64_T, dm->comm));
  /* owned global id -> local index */
  PetscCall(PetscMalloc1(dm->nowned + 1, &table));
  for (int32_t i = 0; i < dm->nowned; ++i) table[i].id = dm->global_node[i], table[i].local = i;
  qsort(table, (size_t)dm->nowned, sizeof(pbng_id_local), pbng_compare_id_local);
  PetscCall(PetscMalloc1(p->give_displ[size] + 1, &p->give_local));
  for (int k = 0; k < p->give_displ[size]; ++k) {
    p->give_local[k] = owned_local(table, dm->nowned, given[k]);
    PetscCheck(p->give_local[k] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "halo: node %" PRId64 " requested from a rank that does not own it", given[k]);
  }
  PetscCall(PetscFree(table));
  PetscCall(PetscFree(wanted));
  PetscCall(PetscFree(given));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ghost_plan_destroy(pbng_ghost_plan *p)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree4(p->want_count, p->want_displ, p->give_count, p->give_displ));
  PetscCall(PetscFree(p->give_local));
  memset(p, 0, sizeof(*p));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ghost_plan_forward(const pbng_ghost_plan *p, int64_t *v)
{
  int64_t *buf;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p->give_displ[p->size] + 1, &buf));
  for (int k = 0; k < p->give_displ[p->size]; ++k) buf[k] = v[p->give_local[k]];
  PetscCallMPI(MPI_Alltoallv(buf, p->give_count, p->give_displ, MPI_INT64_T, &v[p->nowned], p->want_count, p->want_displ, MPI_INT64_T, p->comm));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ghost_plan_reverse_min(const pbng_ghost_plan *p, int64_t *v)
{
  int64_t *buf;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p->give_displ[p->size] + 1, &buf));
  PetscCallMPI(MPI_Alltoallv(&v[p->nowned], p->want_count, p->want_displ, MPI_INT64_T, buf, p->give_count, p->give_displ, MPI_INT64_T, p->comm));
  for (int k = 0; k < p->give_displ[p->size]; ++k) v[p->give_local[k]] = buf[k] < v[p->give_local[k]] ? buf[k] : v[p->give_local[k]];
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_alltoallv_items(const void *send, const int *scount, const int *sdispl, void *recv, const int *rcount, const int *rdispl, size_t size,
                                    MPI_Comm comm)
{
  MPI_Datatype t;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Type_contiguous((int)size, MPI_BYTE, &t));
  PetscCallMPI(MPI_Type_commit(&t));
  PetscCallMPI(MPI_Alltoallv(send, scount, sdispl, t, recv, rcount, rdispl, t, comm));
  PetscCallMPI(MPI_Type_free(&t));
  PetscFunctionReturn(0);
}

/* Displacements of counts grouped by rank: displ[r] = sum of count[< r], displ[size] the total (checked against int). */
static PetscErrorCode displacements(MPI_Comm comm, int size, const int *count, int *displ)
{
  PetscFunctionBeginUser;
  displ[0] = 0;
  for (int r = 0; r < size; ++r) {
    PetscCheck(displ[r] <= INT32_MAX - count[r], comm, PETSC_ERR_SUP, "exchange: more than %d items on one rank", INT32_MAX);
    displ[r + 1] = displ[r] + count[r];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_exchange_items(MPI_Comm comm, size_t size, const int *count, const void *send, int **rcount, int **rdispl, void **recv)
{
  int nranks, *sdispl;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  PetscCall(PetscMalloc1(nranks + 1, &sdispl));
  PetscCall(PetscMalloc1(nranks + 1, rcount));
  PetscCall(PetscMalloc1(nranks + 1, rdispl));
  PetscCallMPI(MPI_Alltoall(count, 1, MPI_INT, *rcount, 1, MPI_INT, comm));
  PetscCall(displacements(comm, nranks, count, sdispl));
  PetscCall(displacements(comm, nranks, *rcount, *rdispl));
  PetscCall(PetscMalloc(size * ((size_t)(*rdispl)[nranks] + 1), recv));
  PetscCall(pbng_alltoallv_items(send, count, sdispl, *recv, *rcount, *rdispl, size, comm));
  PetscCall(PetscFree(sdispl));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_send_items_to(MPI_Comm comm, size_t size, int64_t n, const int *dest, const void *items, int64_t *nrecv, void **recv)
{
  int nranks, *count, *rcount, *rdispl;
  int64_t *offset;
  char *send;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  PetscCall(PetscCalloc2(nranks, &count, nranks + 1, &offset));
  PetscCall(PetscMalloc(size * ((size_t)n + 1), &send));
  for (int64_t k = 0; k < n; ++k) ++count[dest[k]];
  for (int r = 0; r < nranks; ++r) {
    PetscCheck(count[r] >= 0 && count[r] < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "exchange: too many items for rank %d", r);
    offset[r + 1] = offset[r] + count[r];
  }
  for (int64_t k = 0; k < n; ++k) memcpy(send + size * (size_t)offset[dest[k]]++, (const char *)items + size * (size_t)k, size);
  PetscCall(pbng_exchange_items(comm, size, count, send, &rcount, &rdispl, recv));
  *nrecv = rdispl[nranks];
  PetscCall(PetscFree2(count, offset));
  PetscCall(PetscFree(send));
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_allgather_items(MPI_Comm comm, size_t size, int n, const void *mine, int *total, void **all)
{
  int nranks, *counts, *displ;
  MPI_Datatype t;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  PetscCall(PetscMalloc2(nranks, &counts, nranks + 1, &displ));
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm));
  PetscCall(displacements(comm, nranks, counts, displ));
  *total = displ[nranks];
  PetscCall(PetscMalloc(size * ((size_t)*total + 1), all));
  PetscCallMPI(MPI_Type_contiguous((int)size, MPI_BYTE, &t));
  PetscCallMPI(MPI_Type_commit(&t));
  PetscCallMPI(MPI_Allgatherv(mine, n, t, *all, counts, displ, t, comm));
  PetscCallMPI(MPI_Type_free(&t));
  PetscCall(PetscFree2(counts, displ));
  PetscFunctionReturn(0);
}

/* Fills start/node for one direction: for color c and neighbour n, the entries of that neighbour's
 * list (local indices `local[k]`, colors dm->color[local[k]]) in list order, filtered by color.
 * Prescribed nodes are left out: every rank moves its copies itself (pbng_problem_begin_frame). */
static PetscErrorCode lists_by_color(const pbng_dmesh *dm, const pbng_halo *h, const int *count, const int32_t *local,
                                     int32_t **start, int32_t **node)
{
  const int C = h->ncolors, N = h->nneighbors;
  int64_t total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(C * N + 1, start));
  for (int n = 0; n < N; ++n) total += count[h->neighbor[n]];
  PetscCall(PetscMalloc1(total + 1, node));
  int64_t fill = 0;
  for (int c = 0; c < C; ++c) {
    for (int n = 0; n < N; ++n) {
      const int r = h->neighbor[n];
      (*start)[c * N + n] = (int32_t)fill;
      int64_t base = 0;
      for (int q = 0; q < r; ++q) base += count[q];
      for (int k = 0; k < count[r]; ++k)
        if (dm->color[local[base + k]] == c && dm->node_bc[local[base + k]] < 0) (*node)[fill++] = local[base + k];
    }
  }
  (*start)[C * N] = (int32_t)fill;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_create(const pbng_dmesh *dm, pbng_halo *h)
{
  pbng_ghost_plan plan;
  int32_t *want_local;

  PetscFunctionBeginUser;
  memset(h, 0, sizeof(*h));
  h->comm = dm->comm;
  h->ncolors = dm->ncolors;
  PetscCall(pbng_ghost_plan_create(dm, &plan));
  PetscCall(PetscMalloc1(dm->size, &h->neighbor));
  for (int r = 0; r < dm->size; ++r)
    if (r != dm->rank && (plan.want_count[r] > 0 || plan.give_count[r] > 0)) h->neighbor[h->nneighbors++] = r;
  PetscCall(PetscMalloc1(dm->nlocal - dm->nowned + 1, &want_local));
  for (int32_t g = 0; g < dm->nlocal - dm->nowned; ++g) want_local[g] = dm->nowned + g;
  PetscCall(lists_by_color(dm, h, plan.give_count, plan.give_local, &h->send_start, &h->send_node));
  PetscCall(lists_by_color(dm, h, plan.want_count, want_local, &h->recv_start, &h->recv_node));
  h->nodes_per_iteration = h->send_start[h->ncolors * h->nneighbors];
  PetscCall(PetscMalloc1(3 * (int64_t)h->send_start[h->ncolors * h->nneighbors] + 1, &h->send_buf));
  PetscCall(PetscMalloc1(3 * (int64_t)h->recv_start[h->ncolors * h->nneighbors] + 1, &h->recv_buf));
  PetscCall(PetscMalloc1(2 * h->nneighbors + 1, &h->requests));
  PetscCall(PetscFree(want_local));
  PetscCall(pbng_ghost_plan_destroy(&plan));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_create_from_lists(MPI_Comm comm, int ncolors, int nneighbors, int *neighbor, int32_t *send_start, int32_t *send_node,
                                           int32_t *recv_start, int32_t *recv_node, pbng_halo *h)
{
  PetscFunctionBeginUser;
  memset(h, 0, sizeof(*h));
  h->comm = comm;
  h->ncolors = ncolors;
  h->nneighbors = nneighbors;
  h->neighbor = neighbor;
  h->send_start = send_start, h->send_node = send_node;
  h->recv_start = recv_start, h->recv_node = recv_node;
  h->nodes_per_iteration = send_start[ncolors * nneighbors];
  PetscCall(PetscMalloc1(3 * (int64_t)send_start[ncolors * nneighbors] + 1, &h->send_buf));
  PetscCall(PetscMalloc1(3 * (int64_t)recv_start[ncolors * nneighbors] + 1, &h->recv_buf));
  PetscCall(PetscMalloc1(2 * nneighbors + 1, &h->requests));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_create_from_one_side(MPI_Comm comm, int sending, const int *count, int32_t *idx, pbng_halo *h)
{
  int size, *other_count, *displ, *other_displ, *neighbor, N = 0;
  int32_t *other, *send_start, *recv_start;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc3(size, &other_count, size + 1, &displ, size + 1, &other_displ));
  PetscCallMPI(MPI_Alltoall(count, 1, MPI_INT, other_count, 1, MPI_INT, comm));
  displ[0] = other_displ[0] = 0;
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + count[r], other_displ[r + 1] = other_displ[r] + other_count[r];
  PetscCall(PetscMalloc1(other_displ[size] + 1, &other));
  PetscCall(pbng_alltoallv_items(idx, count, displ, other, other_count, other_displ, sizeof(int32_t), comm));
  for (int r = 0; r < size; ++r) N += count[r] + other_count[r] > 0;
  PetscCall(PetscMalloc1(N + 1, &neighbor)); /* separate allocations: the plan frees each (pbng_halo_destroy) */
  PetscCall(PetscMalloc1(N + 1, &send_start));
  PetscCall(PetscMalloc1(N + 1, &recv_start));
  const int *scount = sending ? count : other_count, *rcount = sending ? other_count : count;
  int32_t *send_node = sending ? idx : other, *recv_node = sending ? other : idx;
  send_start[0] = recv_start[0] = 0;
  for (int r = 0, n = 0; r < size; ++r) /* ranks in order: both sides' lists of a neighbour are contiguous, in rank order */
    if (count[r] + other_count[r] > 0) {
      neighbor[n] = r;
      send_start[n + 1] = send_start[n] + scount[r], recv_start[n + 1] = recv_start[n] + rcount[r];
      ++n;
    }
  PetscCall(PetscFree3(other_count, displ, other_displ));
  PetscCall(pbng_halo_create_from_lists(comm, 1, N, neighbor, send_start, send_node, recv_start, recv_node, h));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_destroy(pbng_halo *h)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(h->neighbor));
  PetscCall(PetscFree(h->send_start));
  PetscCall(PetscFree(h->send_node));
  PetscCall(PetscFree(h->recv_start));
  PetscCall(PetscFree(h->recv_node));
  PetscCall(PetscFree(h->send_buf));
  PetscCall(PetscFree(h->recv_buf));
  PetscCall(PetscFree(h->requests));
  memset(h, 0, sizeof(*h));
  PetscFunctionReturn(0);
}

/* Entries of neighbour n for color c are the range [lo, hi) (a neighbour's entries are grouped by color). */
static void entry_range(const int32_t *start, int N, int c, int n, int32_t *lo, int32_t *hi)
{
  *lo = start[c * N + n];
  *hi = start[c * N + n + 1];
}

PetscErrorCode pbng_halo_begin(pbng_halo *h, int c, const double *x)
{
  const int N = h->nneighbors;

  PetscFunctionBeginUser;
  PetscCheck(c >= 0 && c < h->ncolors, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "halo: color %d", c);
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->recv_start, N, c, n, &lo, &hi);
    h->requests[n] = MPI_REQUEST_NULL;
    if (hi == lo) continue; /* the sender knows the same count and sends nothing */
    PetscCallMPI(MPI_Irecv(&h->recv_buf[3 * (int64_t)lo], 3 * (hi - lo), MPI_DOUBLE, h->neighbor[n], c, h->comm, &h->requests[n]));
  }
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->send_start, N, c, n, &lo, &hi);
    h->requests[N + n] = MPI_REQUEST_NULL;
    if (hi == lo) continue;
    for (int32_t k = lo; k < hi; ++k)
      for (int d = 0; d < 3; ++d) h->send_buf[3 * (int64_t)k + d] = x[3 * (int64_t)h->send_node[k] + d];
    PetscCallMPI(MPI_Isend(&h->send_buf[3 * (int64_t)lo], 3 * (hi - lo), MPI_DOUBLE, h->neighbor[n], c, h->comm, &h->requests[N + n]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_end(pbng_halo *h, int c, double *x)
{
  const int N = h->nneighbors;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Waitall(2 * N, h->requests, MPI_STATUSES_IGNORE));
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->recv_start, N, c, n, &lo, &hi);
    for (int32_t k = lo; k < hi; ++k)
      for (int d = 0; d < 3; ++d) x[3 * (int64_t)h->recv_node[k] + d] = h->recv_buf[3 * (int64_t)k + d];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_exchange(pbng_halo *h, int c, double *x)
{
  PetscFunctionBeginUser;
  if (c >= 0) {
    PetscCall(pbng_halo_begin(h, c, x));
    PetscCall(pbng_halo_end(h, c, x));
  } else {
    for (int k = 0; k < h->ncolors; ++k) PetscCall(pbng_halo_exchange(h, k, x));
  }
  PetscFunctionReturn(0);
}

/* Ghost values of color c travel back to the owners (send and receive lists swap roles). */
static PetscErrorCode reverse_color(pbng_halo *h, int c, pbng_halo_reverse_mode mode, const uint8_t *touched, double *v)
{
  const int N = h->nneighbors, tag = h->ncolors + c;

  PetscFunctionBeginUser;
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->send_start, N, c, n, &lo, &hi);
    h->requests[n] = MPI_REQUEST_NULL;
    if (hi > lo) PetscCallMPI(MPI_Irecv(&h->send_buf[3 * (int64_t)lo], 3 * (hi - lo), MPI_DOUBLE, h->neighbor[n], tag, h->comm, &h->requests[n]));
  }
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->recv_start, N, c, n, &lo, &hi);
    h->requests[N + n] = MPI_REQUEST_NULL;
    if (hi == lo) continue;
    for (int32_t k = lo; k < hi; ++k) {
      const int32_t g = h->recv_node[k];
      for (int d = 0; d < 3; ++d) h->recv_buf[3 * (int64_t)k + d] = v[3 * (int64_t)g + d];
      if (mode == PBNG_HALO_ASSIGN && !touched[g]) h->recv_buf[3 * (int64_t)k] = NAN; /* "not moved here" */
    }
    PetscCallMPI(MPI_Isend(&h->recv_buf[3 * (int64_t)lo], 3 * (hi - lo), MPI_DOUBLE, h->neighbor[n], tag, h->comm, &h->requests[N + n]));
  }
  PetscCallMPI(MPI_Waitall(2 * N, h->requests, MPI_STATUSES_IGNORE));
  for (int n = 0; n < N; ++n) {
    int32_t lo, hi;
    entry_range(h->send_start, N, c, n, &lo, &hi);
    for (int32_t k = lo; k < hi; ++k) {
      const double *in = &h->send_buf[3 * (int64_t)k];
      double *out = &v[3 * (int64_t)h->send_node[k]];
      if (mode == PBNG_HALO_ADD) out[0] += in[0], out[1] += in[1], out[2] += in[2];
      else if (mode == PBNG_HALO_MIN) out[0] = fmin(out[0], in[0]), out[1] = fmin(out[1], in[1]), out[2] = fmin(out[2], in[2]);
      else if (mode == PBNG_HALO_MAX) out[0] = fmax(out[0], in[0]), out[1] = fmax(out[1], in[1]), out[2] = fmax(out[2], in[2]);
      else if (!isnan(in[0])) out[0] = in[0], out[1] = in[1], out[2] = in[2];
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_halo_reverse(pbng_halo *h, pbng_halo_reverse_mode mode, const uint8_t *touched, double *v)
{
  PetscFunctionBeginUser;
  for (int c = 0; c < h->ncolors; ++c) PetscCall(reverse_color(h, c, mode, touched, v));
  PetscFunctionReturn(0);
}
