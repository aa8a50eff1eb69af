#include "parallel/dist_graph.h"
#include "core/csr.h"
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

/* Whether global node id lies outside the slice's node range (padding, -1, is no node). */
static int foreign(const pbng_mesh_slice *s, int64_t id) { return id >= 0 && (id < s->node_begin || id >= s->node_end); }

PetscErrorCode pbng_slice_foreign_nodes(const pbng_mesh_slice *s, PetscInt *n, PetscInt **ids)
{
  const int64_t nentries = (s->elem_end - s->elem_begin) * s->nen, nweak = s->weak_end - s->weak_begin;
  int64_t nforeign = 0;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < nentries; ++k) nforeign += foreign(s, s->elems[k]);
  for (int64_t c = 0; c < nweak; ++c)
    for (int j = 0; j < s->weak[c].nnodes; ++j) nforeign += foreign(s, s->weak[c].node[j]);
  PetscCheck(nforeign < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: too many element entries outside the slice's nodes", s->source);
  PetscCall(PetscMalloc1(nforeign + 1, ids));
  *n = 0;
  for (int64_t k = 0; k < nentries; ++k)
    if (foreign(s, s->elems[k])) (*ids)[(*n)++] = s->elems[k];
  for (int64_t c = 0; c < nweak; ++c)
    for (int j = 0; j < s->weak[c].nnodes; ++j)
      if (foreign(s, s->weak[c].node[j])) (*ids)[(*n)++] = (PetscInt)s->weak[c].node[j];
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

/* The processes other than this one whose node ranges hold a node of row t (width entries, -1 padding; each once);
 * returns how many. */
static int other_owners(const pbng_dist_graph *g, const int32_t *t, int width, int *owner)
{
  int n = 0;
  for (int a = 0; a < width; ++a) {
    if (t[a] < 0) continue;
    const int r = pbng_range_owner(g->range, g->size, t[a]);
    int seen = r == g->rank;
    for (int b = 0; b < n && !seen; ++b) seen = owner[b] == r;
    if (!seen) owner[n++] = r;
  }
  return n;
}

/* Rows of node ids (an element's, a weak constraint's) from two lists, the slice's and the received ones, as one:
 * row e of either. */
typedef struct {
  int width;
  int64_t n0, n1;
  const int32_t *rows0, *rows1;
} row_list;

static const int32_t *row_of(const row_list *r, int64_t e) { return e < r->n0 ? &r->rows0[e * r->width] : &r->rows1[(e - r->n0) * r->width]; }

/* A kind of rows around this process's nodes: the slice's and those sent here, and for each node the rows (indices
 * into rows) it lies in, CSR start[nrows + 1], entry. */
typedef struct {
  row_list rows;
  int32_t *recv;
  int64_t *start;
  int32_t *entry;
} incidence;

/* The slice's n rows that touch another process's nodes, sent to it; *recv gets the rows others sent here. */
static PetscErrorCode exchange_boundary_rows(const pbng_dist_graph *g, int width, int64_t n, const int32_t *rows, int64_t *nrecv, int32_t **recv)
{
  int *count, *offset, owner[PBNG_MAX_ELEMENT_NODES], *rcount, *rdispl;
  int32_t *send;

  PetscFunctionBeginUser;
  PetscCheck(width <= PBNG_MAX_ELEMENT_NODES, PETSC_COMM_SELF, PETSC_ERR_PLIB, "node graph: rows of %d nodes", width);
  PetscCall(PetscCalloc2(g->size, &count, g->size + 1, &offset));
  for (int64_t e = 0; e < n; ++e)
    for (int k = 0, m = other_owners(g, &rows[e * width], width, owner); k < m; ++k) count[owner[k]] += width;
  for (int r = 0; r < g->size; ++r) offset[r + 1] = offset[r] + count[r];
  PetscCall(PetscMalloc1(offset[g->size] + 1, &send));
  for (int64_t e = 0; e < n; ++e)
    for (int k = 0, m = other_owners(g, &rows[e * width], width, owner); k < m; ++k) {
      memcpy(&send[offset[owner[k]]], &rows[e * width], sizeof(int32_t) * width);
      offset[owner[k]] += width;
    }
  PetscCall(pbng_exchange_items(g->comm, sizeof(int32_t), count, send, &rcount, &rdispl, (void **)recv));
  *nrecv = rdispl[g->size] / width;
  PetscCall(PetscFree(send));
  PetscCall(PetscFree2(count, offset));
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  PetscFunctionReturn(0);
}

/* For each of this process's nodes, the rows (indices into rows) it lies in: CSR start[nrows + 1], entry. */
static PetscErrorCode incident_rows(const pbng_dist_graph *g, const row_list *rows, int64_t **start, int32_t **entry)
{
  const int64_t first = g->range[g->rank], n = rows->n0 + rows->n1;

  PetscFunctionBeginUser;
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "node graph: %" PRId64 " elements or constraints around one process's nodes (at most 2^31 - 1)", n);
  PetscCall(PetscCalloc1(g->nrows + 1, start));
  for (int pass = 0; pass < 2; ++pass) { /* pass 0 counts, pass 1 fills */
    for (int64_t e = 0; e < n; ++e) {
      const int32_t *t = row_of(rows, e);
      for (int a = 0; a < rows->width; ++a) {
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

/* The rows of this process's nodes among the slice's n rows and those of the other slices. */
static PetscErrorCode incidence_build(const pbng_dist_graph *g, int width, int64_t n, const int32_t *rows, incidence *inc)
{
  int64_t nrecv = 0;

  PetscFunctionBeginUser;
  PetscCall(exchange_boundary_rows(g, width, n, rows, &nrecv, &inc->recv));
  inc->rows = (row_list){width, n, nrecv, rows, inc->recv};
  PetscCall(incident_rows(g, &inc->rows, &inc->start, &inc->entry));
  PetscFunctionReturn(0);
}

static PetscErrorCode incidence_destroy(incidence *inc)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(inc->recv));
  PetscCall(PetscFree(inc->start));
  PetscCall(PetscFree(inc->entry));
  PetscFunctionReturn(0);
}

/* Row i's neighbours into buf (capacity *cap): the other nodes of its elements and weak constraints (inc[ninc]), each
 * once, increasing; returns how many. */
static PetscErrorCode row_neighbours(const pbng_dist_graph *g, int ninc, const incidence *inc, int64_t i, PetscInt **buf, int64_t *cap, int64_t *n)
{
  const int64_t self = g->range[g->rank] + i;
  int64_t len = 0, most = 0;

  PetscFunctionBeginUser;
  for (int q = 0; q < ninc; ++q) most += (inc[q].start[i + 1] - inc[q].start[i]) * inc[q].rows.width;
  PetscCall(pbng_grow(buf, sizeof(PetscInt), most, cap));
  for (int q = 0; q < ninc; ++q)
    for (int64_t k = inc[q].start[i]; k < inc[q].start[i + 1]; ++k) {
      const int32_t *t = row_of(&inc[q].rows, inc[q].entry[k]);
      for (int a = 0; a < inc[q].rows.width; ++a)
        if (t[a] >= 0 && t[a] != self) (*buf)[len++] = t[a];
    }
  PetscInt unique = (PetscInt)len;
  PetscCall(PetscSortRemoveDupsInt(&unique, *buf));
  *n = unique;
  PetscFunctionReturn(0);
}

/* g->start, g->adj from the incident elements and weak constraints (inc[ninc], the elements first), g->weight from
 * the elements (rows counted first, then filled: no spare room). */
static PetscErrorCode fill_rows(pbng_dist_graph *g, int ninc, const incidence *inc)
{
  PetscInt *buf = NULL;
  int64_t cap = 0, n, total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(g->nrows + 1, &g->start));
  PetscCall(PetscMalloc1(g->nrows + 1, &g->weight));
  g->start[0] = 0;
  for (int64_t i = 0; i < g->nrows; ++i) {
    PetscCall(row_neighbours(g, ninc, inc, i, &buf, &cap, &n));
    total += n;
    PetscCheck(total < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "node graph: more than 2^31 - 1 edges on one process");
    g->start[i + 1] = (PetscInt)total;
    g->weight[i] = (PetscInt)(inc[0].start[i + 1] - inc[0].start[i] + 1);
  }
  PetscCall(PetscMalloc1(total + 1, &g->adj));
  for (int64_t i = 0; i < g->nrows; ++i) {
    PetscCall(row_neighbours(g, ninc, inc, i, &buf, &cap, &n));
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

PetscErrorCode pbng_slice_weak_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range)
{
  PetscFunctionBeginUser;
  PetscCall(gather_ranges(comm, s->weak_begin, s->weak_end, s->nglobal_weak, "weak constraint", range));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_group_pairs(int64_t n, const pbng_id_pair *pairs, int64_t first, int64_t nrows, const char *what, int64_t **start, int64_t **value)
{
  int32_t *key, *item;

  PetscFunctionBeginUser;
  PetscCheck(nrows < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %" PRId64 " rows on one process (at most 2^31 - 1)", what, nrows);
  PetscCall(PetscMalloc1(n + 1, &key));
  for (int64_t k = 0; k < n; ++k) {
    PetscCheck(pairs[k].key >= first && pairs[k].key < first + nrows, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: id %" PRId64 " sent to the wrong process", what,
               pairs[k].key);
    key[k] = (int32_t)(pairs[k].key - first);
  }
  PetscCall(pbng_csr_by_key64(n, key, 1, nrows, start, &item));
  PetscCall(PetscMalloc1(n + 1, value));
  for (int64_t k = 0; k < n; ++k) (*value)[k] = pairs[item[k]].value;
  PetscCall(PetscFree(key));
  PetscCall(PetscFree(item));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_rows_by_node(MPI_Comm comm, const int64_t *node_range, int64_t n, int width, const int32_t *rows, int64_t first, const char *what,
                                 int64_t **start, int64_t **item)
{
  int size, rank;
  int64_t m = 0, nrecv;
  int *dest;
  pbng_id_pair *pairs, *recv;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc2(n * width + 1, &dest, n * width + 1, &pairs));
  for (int64_t k = 0; k < n * width; ++k) {
    if (rows[k] < 0) continue; /* padding */
    dest[m] = pbng_range_owner(node_range, size, rows[k]);
    pairs[m++] = (pbng_id_pair){rows[k], first + k / width};
  }
  PetscCall(pbng_send_items_to(comm, sizeof(pbng_id_pair), m, dest, pairs, &nrecv, (void **)&recv));
  PetscCall(pbng_group_pairs(nrecv, recv, node_range[rank], node_range[rank + 1] - node_range[rank], what, start, item));
  PetscCall(PetscFree2(dest, pairs));
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_send_pairs_at_nodes(const pbng_dist_graph *g, int64_t nnodes, const int64_t *astart, const int64_t *a, const int64_t *bstart,
                                        const int64_t *b, int64_t *nrecv, pbng_id_pair **recv)
{
  int64_t n = 0;
  int *dest;
  pbng_id_pair *pairs;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < nnodes; ++i) n += (astart[i + 1] - astart[i]) * (bstart[i + 1] - bstart[i]);
  PetscCall(PetscMalloc2(n + 1, &dest, n + 1, &pairs));
  n = 0;
  for (int64_t i = 0; i < nnodes; ++i)
    for (int64_t p = astart[i]; p < astart[i + 1]; ++p)
      for (int64_t q = bstart[i]; q < bstart[i + 1]; ++q)
        if (b[q] != a[p]) dest[n] = pbng_range_owner(g->range, g->size, a[p]), pairs[n++] = (pbng_id_pair){a[p], b[q]};
  PetscCall(pbng_send_items_to(g->comm, sizeof(pbng_id_pair), n, dest, pairs, nrecv, (void **)recv));
  PetscCall(PetscFree2(dest, pairs));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dist_graph_fill_pairs(pbng_dist_graph *g, int64_t n, const pbng_id_pair *pairs, const char *what)
{
  int64_t *start, *neighbour;

  PetscFunctionBeginUser;
  PetscCall(pbng_group_pairs(n, pairs, g->range[g->rank], g->nrows, what, &start, &neighbour));
  PetscCheck(start[g->nrows] < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: more than 2^31 - 1 edges on one process", what);
  PetscCall(PetscMalloc1(g->nrows + 1, &g->start));
  PetscCall(PetscMalloc1(start[g->nrows] + 1, &g->adj));
  g->start[0] = 0;
  for (int64_t e = 0; e < g->nrows; ++e) {
    PetscInt *row = &g->adj[g->start[e]], m = (PetscInt)(start[e + 1] - start[e]);
    for (PetscInt k = 0; k < m; ++k) row[k] = (PetscInt)neighbour[start[e] + k];
    PetscCall(PetscSortRemoveDupsInt(&m, row));
    g->start[e + 1] = g->start[e] + m;
  }
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(neighbour));
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
  incidence inc[2]; /* the elements, the weak constraints */
  int32_t *weak_rows = NULL;
  const int ninc = s->nglobal_weak > 0 ? 2 : 1; /* every slice alike */

  PetscFunctionBeginUser;
  memset(inc, 0, sizeof(inc));
  PetscCall(pbng_dist_graph_start(comm, s->nglobal_nodes, "node", g));
  PetscCall(pbng_slice_ranges(g->comm, s, &g->range));
  g->nrows = s->node_end - s->node_begin;
  PetscCall(incidence_build(g, s->nen, s->elem_end - s->elem_begin, s->elems, &inc[0]));
  if (ninc == 2) {
    PetscCall(pbng_mesh_slice_weak_rows(s, &weak_rows));
    PetscCall(incidence_build(g, PBNG_WC_MAX_NODES, s->weak_end - s->weak_begin, weak_rows, &inc[1]));
  }
  PetscCall(fill_rows(g, ninc, inc));
  for (int q = 0; q < ninc; ++q) PetscCall(incidence_destroy(&inc[q]));
  PetscCall(PetscFree(weak_rows));
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
