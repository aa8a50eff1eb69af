#include "parallel/parallel_element_coloring.h"
#include "parallel/halo.h"
#include "parallel/parallel_coloring.h"
#include <string.h>

PetscErrorCode pbng_element_graph_build(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g)
{
  int64_t *node_range, *nstart, *nelem, nrecv;
  pbng_id_pair *recv;

  PetscFunctionBeginUser;
  PetscCall(pbng_dist_graph_start(comm, s->nglobal_elems, "element", g));
  PetscCall(pbng_slice_element_ranges(comm, s, &g->range));
  g->nrows = s->elem_end - s->elem_begin;
  PetscCall(pbng_slice_ranges(comm, s, &node_range));
  PetscCall(pbng_rows_by_node(comm, node_range, s->elem_end - s->elem_begin, s->nen, s->elems, s->elem_begin, "element graph", &nstart, &nelem));
  PetscCall(pbng_send_pairs_at_nodes(g, s->node_end - s->node_begin, nstart, nelem, nstart, nelem, &nrecv, &recv));
  PetscCall(pbng_dist_graph_fill_pairs(g, nrecv, recv, "element graph"));
  PetscCall(PetscFree(node_range));
  PetscCall(PetscFree(nstart));
  PetscCall(PetscFree(nelem));
  PetscCall(PetscFree(recv));
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
