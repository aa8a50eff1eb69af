#include "parallel/parallel_weak_coloring.h"
#include "parallel/halo.h"
#include "parallel/parallel_coloring.h"
#include <string.h>

/* A conflict graph over the mesh's weak constraints, rows the slices' ranges (edges not yet given). */
static PetscErrorCode weak_graph_start(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_dist_graph_start(comm, s->nglobal_weak, "weak constraint", g));
  PetscCall(pbng_slice_weak_ranges(comm, s, &g->range));
  g->nrows = s->weak_end - s->weak_begin;
  PetscFunctionReturn(0);
}

/* For each node of this process, the constraints at it or at one of its neighbours: every node's constraints sent to
 * its own and its neighbours' processes (nodes: the node graph; start, item: the constraints at each node here). */
static PetscErrorCode constraints_around(const pbng_dist_graph *nodes, const int64_t *start, const int64_t *item, int64_t **around_start,
                                         int64_t **around)
{
  const int64_t first = nodes->range[nodes->rank];
  int64_t n = 0, nrecv;
  int *dest;
  pbng_id_pair *pairs, *recv;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < nodes->nrows; ++i) n += (start[i + 1] - start[i]) * (nodes->start[i + 1] - nodes->start[i] + 1);
  PetscCall(PetscMalloc2(n + 1, &dest, n + 1, &pairs));
  n = 0;
  for (int64_t i = 0; i < nodes->nrows; ++i)
    for (PetscInt k = nodes->start[i] - 1; k < nodes->start[i + 1]; ++k) { /* the node itself, then its neighbours */
      const int64_t u = k < nodes->start[i] ? first + i : nodes->adj[k];
      for (int64_t q = start[i]; q < start[i + 1]; ++q) dest[n] = pbng_range_owner(nodes->range, nodes->size, u), pairs[n++] = (pbng_id_pair){u, item[q]};
    }
  PetscCall(pbng_send_items_to(nodes->comm, sizeof(pbng_id_pair), n, dest, pairs, &nrecv, (void **)&recv));
  PetscCall(pbng_group_pairs(nrecv, recv, first, nodes->nrows, "weak-constraint blocks", around_start, around));
  PetscCall(PetscFree2(dest, pairs));
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

/* The conflict graph g (started) from each node's constraints (start, item) and those they conflict with there
 * (other_start, other), colored into color[]. */
static PetscErrorCode color_conflicts(pbng_dist_graph *g, int64_t nnodes, const int64_t *start, const int64_t *item, const int64_t *other_start,
                                      const int64_t *other, int32_t *color, int *ncolors, int *rounds)
{
  int64_t nrecv;
  pbng_id_pair *recv;

  PetscFunctionBeginUser;
  PetscCall(pbng_send_pairs_at_nodes(g, nnodes, start, item, other_start, other, &nrecv, &recv));
  PetscCall(pbng_dist_graph_fill_pairs(g, nrecv, recv, "weak-constraint graph"));
  PetscCall(PetscFree(recv));
  PetscCall(pbng_color_dist_graph(g, color, ncolors, rounds));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_slice_weak(const pbng_dist_graph *nodes, const pbng_mesh_slice *s, int pbd, int32_t *block, int *nblock_colors, int32_t *weak,
                                     int *nweak_colors, int *rounds)
{
  pbng_dist_graph g;
  int32_t *rows;
  int64_t *start, *item, *around_start, *around;
  int r = 0;

  PetscFunctionBeginUser;
  *nblock_colors = 0, *rounds = 0;
  if (pbd) *nweak_colors = 0;
  if (s->nglobal_weak == 0) PetscFunctionReturn(0); /* every slice alike */
  PetscCall(pbng_mesh_slice_weak_rows(s, &rows));
  PetscCall(pbng_rows_by_node(nodes->comm, nodes->range, s->weak_end - s->weak_begin, PBNG_WC_MAX_NODES, rows, s->weak_begin, "weak-constraint graph",
                              &start, &item));
  PetscCall(PetscFree(rows));
  PetscCall(constraints_around(nodes, start, item, &around_start, &around));
  PetscCall(weak_graph_start(nodes->comm, s, &g));
  PetscCall(color_conflicts(&g, nodes->nrows, start, item, around_start, around, block, nblock_colors, &r));
  PetscCall(pbng_dist_graph_destroy(&g));
  *rounds = r;
  if (pbd) {
    PetscCall(weak_graph_start(nodes->comm, s, &g));
    PetscCall(color_conflicts(&g, nodes->nrows, start, item, start, item, weak, nweak_colors, &r));
    PetscCall(pbng_dist_graph_destroy(&g));
    *rounds = PetscMax(*rounds, r);
  }
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(item));
  PetscCall(PetscFree(around_start));
  PetscCall(PetscFree(around));
  PetscFunctionReturn(0);
}
