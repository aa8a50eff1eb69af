#include "parallel/parallel_element_coloring.h"
#include "core/csr.h"
#include "parallel/halo.h"
#include "parallel/parallel_coloring.h"
#include <string.h>

/* A pair of global ids sent to another process: (node, element) to a node's process, (element, neighbour) to an
 * element's process. */
typedef struct {
  int64_t key, value;
} id_pair;

/* Pairs grouped by key - first (0 <= key - first < nrows): CSR *start[nrows + 1], *value the pairs' values row by row. */
static PetscErrorCode group_pairs(int64_t n, const id_pair *pairs, int64_t first, int64_t nrows, int64_t **start, int64_t **value)
{
  int32_t *key, *item;

  PetscFunctionBeginUser;
  PetscCheck(nrows < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "element graph: %" PRId64 " rows on one process (at most 2^31 - 1)", nrows);
  PetscCall(PetscMalloc1(n + 1, &key));
  for (int64_t k = 0; k < n; ++k) {
    PetscCheck(pairs[k].key >= first && pairs[k].key < first + nrows, PETSC_COMM_SELF, PETSC_ERR_PLIB, "element graph: id %" PRId64 " sent to the wrong process",
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

/* Each of this process's nodes' incident elements (global ids): every slice element's (node, element) pairs sent to
 * the node's process. */
static PetscErrorCode node_incidences(const pbng_dist_graph *g, const pbng_mesh_slice *s, const int64_t *node_range, int64_t **start, int64_t **elem)
{
  const int64_t nentries = (s->elem_end - s->elem_begin) * s->nen;
  int64_t n = 0, nrecv;
  int *dest;
  id_pair *pairs, *recv;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nentries + 1, &dest, nentries + 1, &pairs));
  for (int64_t k = 0; k < nentries; ++k) {
    if (s->elems[k] < 0) continue; /* padding */
    dest[n] = pbng_range_owner(node_range, g->size, s->elems[k]);
    pairs[n++] = (id_pair){s->elems[k], s->elem_begin + k / s->nen};
  }
  PetscCall(pbng_send_items_to(g->comm, sizeof(id_pair), n, dest, pairs, &nrecv, (void **)&recv));
  PetscCall(group_pairs(nrecv, recv, node_range[g->rank], node_range[g->rank + 1] - node_range[g->rank], start, elem));
  PetscCall(PetscFree2(dest, pairs));
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

/* Every element's neighbours at this process's nodes, (element, neighbour) pairs sent to the element's process. */
static PetscErrorCode send_neighbours(const pbng_dist_graph *g, int64_t nnodes, const int64_t *start, const int64_t *elem, int64_t *nrecv, id_pair **recv)
{
  int64_t n = 0;
  int *dest;
  id_pair *pairs;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < nnodes; ++i) n += (start[i + 1] - start[i]) * (start[i + 1] - start[i] - 1);
  PetscCall(PetscMalloc2(n + 1, &dest, n + 1, &pairs));
  n = 0;
  for (int64_t i = 0; i < nnodes; ++i)
    for (int64_t a = start[i]; a < start[i + 1]; ++a)
      for (int64_t b = start[i]; b < start[i + 1]; ++b)
        if (elem[b] != elem[a]) dest[n] = pbng_range_owner(g->range, g->size, elem[a]), pairs[n++] = (id_pair){elem[a], elem[b]};
  PetscCall(pbng_send_items_to(g->comm, sizeof(id_pair), n, dest, pairs, nrecv, (void **)recv));
  PetscCall(PetscFree2(dest, pairs));
  PetscFunctionReturn(0);
}

/* g->start, g->adj from each row's neighbours (repeated once per shared node): sorted, each once. */
static PetscErrorCode fill_element_rows(pbng_dist_graph *g, const int64_t *start, const int64_t *neighbour)
{
  PetscFunctionBeginUser;
  PetscCheck(start[g->nrows] < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "element graph: more than 2^31 - 1 edges on one process");
  PetscCall(PetscMalloc1(g->nrows + 1, &g->start));
  PetscCall(PetscMalloc1(start[g->nrows] + 1, &g->adj));
  g->start[0] = 0;
  for (int64_t e = 0; e < g->nrows; ++e) {
    PetscInt *row = &g->adj[g->start[e]], n = (PetscInt)(start[e + 1] - start[e]);
    for (PetscInt k = 0; k < n; ++k) row[k] = (PetscInt)neighbour[start[e] + k];
    PetscCall(PetscSortRemoveDupsInt(&n, row));
    g->start[e + 1] = g->start[e] + n;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_element_graph_build(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g)
{
  int64_t *node_range, *nstart, *nelem, nrecv, *estart, *neighbour;
  id_pair *recv;

  PetscFunctionBeginUser;
  PetscCall(pbng_dist_graph_start(comm, s->nglobal_elems, "element", g));
  PetscCall(pbng_slice_element_ranges(comm, s, &g->range));
  g->nrows = s->elem_end - s->elem_begin;
  PetscCall(pbng_slice_ranges(comm, s, &node_range));
  PetscCall(node_incidences(g, s, node_range, &nstart, &nelem));
  PetscCall(send_neighbours(g, s->node_end - s->node_begin, nstart, nelem, &nrecv, &recv));
  PetscCall(group_pairs(nrecv, recv, s->elem_begin, g->nrows, &estart, &neighbour));
  PetscCall(fill_element_rows(g, estart, neighbour));
  PetscCall(PetscFree(node_range));
  PetscCall(PetscFree(nstart));
  PetscCall(PetscFree(nelem));
  PetscCall(PetscFree(recv));
  PetscCall(PetscFree(estart));
  PetscCall(PetscFree(neighbour));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_slice_elements(MPI_Comm comm, const pbng_mesh_slice *s, int32_t *color, int *ncolors, int *rounds)
{
  pbng_dist_graph g;

  PetscFunctionBeginUser;
  PetscCall(pbng_element_graph_build(comm, s, &g));
  PetscCall(pbng_color_dist_graph(&g, color, ncolors, rounds));
  PetscCall(pbng_dist_graph_destroy(&g));
  PetscFunctionReturn(0);
}
