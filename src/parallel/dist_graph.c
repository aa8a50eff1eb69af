#include "parallel/dist_graph.h"
#include "core/grow.h"
#include "parallel/halo.h"
#include <string.h>

int pbng_range_owner(const int64_t *range, int size, int64_t id)
{
  int lo = 0, hi = size - 1; /* the last r with range[r] <= id (empty ranges skipped: the last of equal starts) */
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (range[mid] <= id) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

PetscErrorCode pbng_slice_foreign_nodes(const pbng_mesh_slice *s, PetscInt *n, PetscInt **ids)
{
  const int64_t nentries = (s->elem_end - s->elem_begin) * s->nen;
  int64_t nforeign = 0;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < nentries; ++k) nforeign += s->elems[k] >= 0 && (s->elems[k] < s->node_begin || s->elems[k] >= s->node_end);
  PetscCheck(nforeign < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: too many element entries outside the slice's nodes", s->source);
  PetscCall(PetscMalloc1(nforeign + 1, ids));
  *n = 0;
  for (int64_t k = 0; k < nentries; ++k)
    if (s->elems[k] >= 0 && (s->elems[k] < s->node_begin || s->elems[k] >= s->node_end)) (*ids)[(*n)++] = s->elems[k];
  PetscCall(PetscSortRemoveDupsInt(n, *ids));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ask_range_owners(MPI_Comm comm, const int64_t *range, PetscInt n, const PetscInt *ids, size_t size, pbng_node_answer answer,
                                     void *ctx, void *out)
{
  int nranks, rank, *count, *displ, *rcount, *rdispl;
  PetscInt *asked;
  char *answers;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "too many nodes asked of other processes");
  PetscCall(PetscCalloc2(nranks, &count, nranks + 1, &displ));
  for (PetscInt k = 0; k < n; ++k) ++count[pbng_range_owner(range, nranks, ids[k])];
  for (int r = 0; r < nranks; ++r) displ[r + 1] = displ[r] + count[r];
  PetscCall(pbng_exchange_items(comm, sizeof(PetscInt), count, ids, &rcount, &rdispl, (void **)&asked));
  PetscCall(PetscMalloc1((rdispl[nranks] + 1) * size, &answers));
  for (int k = 0; k < rdispl[nranks]; ++k) answer(ctx, asked[k] - range[rank], answers + (size_t)k * size);
  PetscCall(pbng_alltoallv_items(answers, rcount, rdispl, out, count, displ, size, comm)); /* back grouped as asked */
  PetscCall(PetscFree(answers));
  PetscCall(PetscFree(asked));
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  PetscCall(PetscFree2(count, displ));
  PetscFunctionReturn(0);
}

/* The processes other than this one whose node ranges hold a node of row t (each once); returns how many. */
static int other_owners(const pbng_dist_graph *g, const int32_t *t, int nen, int *owner)
{
  int n = 0;
  for (int a = 0; a < nen; ++a) {
    if (t[a] < 0) continue;
    const int r = pbng_range_owner(g->range, g->size, t[a]);
    int seen = r == g->rank;
    for (int b = 0; b < n && !seen; ++b) seen = owner[b] == r;
    if (!seen) owner[n++] = r;
  }
  return n;
}

/* The slice's element rows that touch another process's nodes, sent to it; *recv gets the rows others sent here. */
static PetscErrorCode exchange_boundary_elements(const pbng_dist_graph *g, const pbng_mesh_slice *s, int64_t *nrecv, int32_t **recv)
{
  const int nen = s->nen;
  const int64_t nelems = s->elem_end - s->elem_begin;
  int *count, *offset, owner[PBNG_MAX_ELEMENT_NODES], *rcount, *rdispl;
  int32_t *send;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc2(g->size, &count, g->size + 1, &offset));
  for (int64_t e = 0; e < nelems; ++e)
    for (int k = 0, n = other_owners(g, &s->elems[e * nen], nen, owner); k < n; ++k) count[owner[k]] += nen;
  for (int r = 0; r < g->size; ++r) offset[r + 1] = offset[r] + count[r];
  PetscCall(PetscMalloc1(offset[g->size] + 1, &send));
  for (int64_t e = 0; e < nelems; ++e)
    for (int k = 0, n = other_owners(g, &s->elems[e * nen], nen, owner); k < n; ++k) {
      memcpy(&send[offset[owner[k]]], &s->elems[e * nen], sizeof(int32_t) * nen);
      offset[owner[k]] += nen;
    }
  PetscCall(pbng_exchange_items(g->comm, sizeof(int32_t), count, send, &rcount, &rdispl, (void **)recv));
  *nrecv = rdispl[g->size] / nen;
  PetscCall(PetscFree(send));
  PetscCall(PetscFree2(count, offset));
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  PetscFunctionReturn(0);
}

/* Element rows from two lists (the slice's, then the received ones) as one: row e of either. */
typedef struct {
  int nen;
  int64_t n0, n1;
  const int32_t *rows0, *rows1;
} element_rows;

static const int32_t *row_of(const element_rows *r, int64_t e) { return e < r->n0 ? &r->rows0[e * r->nen] : &r->rows1[(e - r->n0) * r->nen]; }

/* For each of this process's nodes, the rows (indices into rows) it lies in: CSR start[nrows + 1], entry. */
static PetscErrorCode incident_elements(const pbng_dist_graph *g, const element_rows *rows, int64_t **start, int32_t **entry)
{
  const int64_t first = g->range[g->rank], n = rows->n0 + rows->n1;

  PetscFunctionBeginUser;
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "node graph: %" PRId64 " elements around one process's nodes (at most 2^31 - 1)", n);
  PetscCall(PetscCalloc1(g->nrows + 1, start));
  for (int pass = 0; pass < 2; ++pass) { /* pass 0 counts, pass 1 fills */
    for (int64_t e = 0; e < n; ++e) {
      const int32_t *t = row_of(rows, e);
      for (int a = 0; a < rows->nen; ++a) {
        const int64_t i = (int64_t)t[a] - first;
        if (t[a] < 0 || i < 0 || i >= g->nrows) continue;
        if (pass == 0) ++(*start)[i + 1];
        else (*entry)[(*start)[i]++] = (int32_t)e;
      }
    }
    if (pass == 0) {
      for (int64_t i = 0; i < g->nrows; ++i) (*start)[i + 1] += (*start)[i];
      PetscCall(PetscMalloc1((*start)[g->nrows] + 1, entry));
    } else
      for (int64_t i = g->nrows; i > 0; --i) (*start)[i] = (*start)[i - 1]; /* the fill advanced each start to the next row's */
  }
  (*start)[0] = 0;
  PetscFunctionReturn(0);
}

/* Row i's neighbours into buf (capacity *cap): the other nodes of its elements, each once, increasing; returns how many. */
static PetscErrorCode row_neighbours(const pbng_dist_graph *g, const element_rows *rows, const int64_t *start, const int32_t *entry, int64_t i,
                                     PetscInt **buf, int64_t *cap, int64_t *n)
{
  const int64_t self = g->range[g->rank] + i;
  int64_t len = 0;

  PetscFunctionBeginUser;
  PetscCall(pbng_grow(buf, sizeof(PetscInt), (start[i + 1] - start[i]) * rows->nen, cap));
  for (int64_t k = start[i]; k < start[i + 1]; ++k) {
    const int32_t *t = row_of(rows, entry[k]);
    for (int a = 0; a < rows->nen; ++a)
      if (t[a] >= 0 && t[a] != self) (*buf)[len++] = t[a];
  }
  PetscInt unique = (PetscInt)len;
  PetscCall(PetscSortRemoveDupsInt(&unique, *buf));
  *n = unique;
  PetscFunctionReturn(0);
}

/* g->start, g->adj and g->weight from the incident elements (rows counted first, then filled: no spare room). */
static PetscErrorCode fill_rows(pbng_dist_graph *g, const element_rows *rows, const int64_t *start, const int32_t *entry)
{
  PetscInt *buf = NULL;
  int64_t cap = 0, n, total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(g->nrows + 1, &g->start));
  PetscCall(PetscMalloc1(g->nrows + 1, &g->weight));
  g->start[0] = 0;
  for (int64_t i = 0; i < g->nrows; ++i) {
    PetscCall(row_neighbours(g, rows, start, entry, i, &buf, &cap, &n));
    total += n;
    PetscCheck(total < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "node graph: more than 2^31 - 1 edges on one process");
    g->start[i + 1] = (PetscInt)total;
    g->weight[i] = (PetscInt)(start[i + 1] - start[i] + 1);
  }
  PetscCall(PetscMalloc1(total + 1, &g->adj));
  for (int64_t i = 0; i < g->nrows; ++i) {
    PetscCall(row_neighbours(g, rows, start, entry, i, &buf, &cap, &n));
    PetscCall(PetscArraycpy(&g->adj[g->start[i]], buf, n));
  }
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(0);
}

/* Every process's [begin, end) of `what` as one increasing array: *range[size + 1], range[size] = total. */
static PetscErrorCode gather_ranges(MPI_Comm comm, int64_t begin, int64_t end, int64_t total, const char *what, int64_t **range)
{
  int rank, size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc1(size + 1, range));
  PetscCallMPI(MPI_Allgather(&begin, 1, MPI_INT64_T, *range, 1, MPI_INT64_T, comm));
  (*range)[size] = total;
  for (int r = 0; r < size; ++r)
    PetscCheck((*range)[r] <= (*range)[r + 1], comm, PETSC_ERR_ARG_WRONG, "the slices' %s ranges do not increase with the rank", what);
  PetscCheck((*range)[rank + 1] == end, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "the slices' %s ranges leave a gap", what);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range)
{
  PetscFunctionBeginUser;
  PetscCall(gather_ranges(comm, s->node_begin, s->node_end, s->nglobal_nodes, "node", range));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_element_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range)
{
  PetscFunctionBeginUser;
  PetscCall(gather_ranges(comm, s->elem_begin, s->elem_end, s->nglobal_elems, "element", range));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dist_graph_start(MPI_Comm comm, int64_t nglobal, const char *what, pbng_dist_graph *g)
{
  PetscFunctionBeginUser;
  memset(g, 0, sizeof(*g));
  g->comm = comm;
  PetscCallMPI(MPI_Comm_rank(comm, &g->rank));
  PetscCallMPI(MPI_Comm_size(comm, &g->size));
  PetscCheck(nglobal < PETSC_MAX_INT, comm, PETSC_ERR_SUP, "%s graph: %" PRId64 " %ss exceed PetscInt", what, nglobal, what);
  g->nglobal = nglobal;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dist_graph_build(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g)
{
  int64_t nrecv = 0, *start;
  int32_t *recv, *entry;

  PetscFunctionBeginUser;
  PetscCall(pbng_dist_graph_start(comm, s->nglobal_nodes, "node", g));
  PetscCall(pbng_slice_ranges(g->comm, s, &g->range));
  g->nrows = s->node_end - s->node_begin;
  PetscCall(exchange_boundary_elements(g, s, &nrecv, &recv));
  const element_rows rows = {s->nen, s->elem_end - s->elem_begin, nrecv, s->elems, recv};
  PetscCall(incident_elements(g, &rows, &start, &entry));
  PetscCall(fill_rows(g, &rows, start, entry));
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(entry));
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dist_graph_destroy(pbng_dist_graph *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->range));
  PetscCall(PetscFree(g->start));
  PetscCall(PetscFree(g->adj));
  PetscCall(PetscFree(g->weight));
  memset(g, 0, sizeof(*g));
  PetscFunctionReturn(0);
}
