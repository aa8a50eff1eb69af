#include "parallel/distributed_partition.h"
#include "parallel/parallel_coloring.h"
#include "parallel/parallel_element_coloring.h"
#include "parallel/parallel_weak_coloring.h"
#include "parallel/ptscotch_partition.h"
#include "parallel/weak_components.h"
#include <malloc.h>
#include <math.h>
#include <string.h>

/* The whole mesh's largest extent from the slices' nodes (the same min and max as pbng_mesh_extent takes). */
static PetscErrorCode slices_extent(MPI_Comm comm, const pbng_mesh_slice *s, double *extent)
{
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < s->node_end - s->node_begin; ++i)
    for (int d = 0; d < 3; ++d) lo[d] = fmin(lo[d], s->X[3 * i + d]), hi[d] = fmax(hi[d], s->X[3 * i + d]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, lo, 3, MPI_DOUBLE, MPI_MIN, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hi, 3, MPI_DOUBLE, MPI_MAX, comm));
  *extent = 0;
  for (int d = 0; d < 3; ++d) *extent = fmax(*extent, hi[d] - lo[d]);
  PetscFunctionReturn(0);
}

/* The slices' colorings: the nodes' (color), and when elem_colors the elements' and weak constraints' PBD/XPBD ones
 * (elem_color, weak_color), and the weak constraints' block colors (block_color) when the mesh has any; their counts
 * in c and out. */
typedef struct {
  int32_t *color, *elem_color, *weak_color, *block_color;
} slice_colorings;

static PetscErrorCode color_slices(MPI_Comm comm, const pbng_mesh_slice *s, const pbng_dist_graph *graph, int elem_colors, slice_colorings *sc,
                                   pbng_slice_colors *c, pbng_parts *out, int *rounds)
{
  const int64_t nweak = s->weak_end - s->weak_begin;
  int r;

  PetscFunctionBeginUser;
  memset(sc, 0, sizeof(*sc));
  PetscCall(PetscMalloc1(graph->nrows + 1, &sc->color));
  PetscCall(pbng_color_dist_graph(graph, sc->color, &out->ncolors, rounds));
  if (elem_colors) {
    PetscCall(PetscMalloc1(s->elem_end - s->elem_begin + 1, &sc->elem_color));
    PetscCall(pbng_color_slice_elements(comm, s, sc->elem_color, &out->nelem_colors, &r));
    *rounds = PetscMax(*rounds, r);
  }
  if (s->nglobal_weak > 0) {
    PetscCall(PetscMalloc2(nweak + 1, &sc->block_color, nweak + 1, &sc->weak_color));
    PetscCall(pbng_color_slice_weak(graph, s, elem_colors, sc->block_color, &out->nblock_colors, sc->weak_color, &out->nweak_colors, &r));
    *rounds = PetscMax(*rounds, r);
  }
  *c = (pbng_slice_colors){.node = sc->color, .elem = sc->elem_color, .weak = elem_colors ? sc->weak_color : NULL, .block = sc->block_color,
                           .nnode = out->ncolors, .nelem = out->nelem_colors, .nweak = out->nweak_colors, .nblock = out->nblock_colors};
  PetscFunctionReturn(0);
}

static PetscErrorCode slice_colorings_destroy(slice_colorings *sc)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(sc->color));
  PetscCall(PetscFree(sc->elem_color));
  PetscCall(PetscFree2(sc->block_color, sc->weak_color));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_slice_kept(MPI_Comm comm, const pbng_mesh_slice *s, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t)
{
  pbng_dist_graph graph;
  slice_colorings sc;
  pbng_slice_colors colors;
  int32_t *part;
  int64_t *group;
  int size, rank, weak_rounds;
  double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  memset(out, 0, sizeof(*out));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(nparts >= 1 && nparts <= s->nglobal_nodes, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s: %" PRId64 " nodes cannot be split over %d parts", s->source,
             s->nglobal_nodes, nparts);
  PetscCall(slices_extent(comm, s, &out->extent));
  PetscCall(pbng_dist_graph_build(comm, s, &graph));
  t->graph = MPI_Wtime() - t0, t0 = MPI_Wtime();
  PetscCall(color_slices(comm, s, &graph, elem_colors, &sc, &colors, out, &t->rounds));
  t->coloring = MPI_Wtime() - t0, t0 = MPI_Wtime();
  PetscCall(PetscMalloc2(graph.nrows + 1, &part, graph.nrows + 1, &group));
  PetscCall(pbng_partition_ptscotch(&graph, nparts, part));
  PetscCall(pbng_keep_weak_constraints_together(comm, s, graph.range, part, group, &weak_rounds)); /* each group in one part */
  PetscCall(pbng_fill_empty_parts(comm, graph.nrows, group, nparts, part));
  malloc_trim(0); /* PT-Scotch's and the graph's memory back to the system before the pieces are built */
  t->partition = MPI_Wtime() - t0, t0 = MPI_Wtime();
  out->nparts = nparts, out->first = pbng_parts_first(nparts, size, rank);
  out->nlocal = pbng_parts_first(nparts, size, rank + 1) - out->first;
  PetscCall(PetscCalloc1(out->nlocal + 1, &out->sub));
  PetscCall(pbng_submesh_migrate(comm, s, graph.range, part, &colors, nparts, out->sub));
  t->migration = MPI_Wtime() - t0;
  out->nnodes = s->nglobal_nodes, out->nelems = s->nglobal_elems, out->nweak = s->nglobal_weak, out->etype = s->etype;
  PetscCall(PetscStrncpy(out->source, s->source, sizeof(out->source)));
  out->nsets = s->nsets;
  PetscCall(PetscMalloc1(s->nsets + 1, &out->set_name));
  if (s->nsets > 0) memcpy(out->set_name, s->set_name, sizeof(*s->set_name) * (size_t)s->nsets); /* a grid has none (NULL) */
  PetscCall(PetscFree2(part, group));
  PetscCall(slice_colorings_destroy(&sc));
  PetscCall(pbng_dist_graph_destroy(&graph));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_slice_ptscotch(MPI_Comm comm, pbng_mesh_slice *s, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t)
{
  PetscFunctionBeginUser;
  const PetscErrorCode ierr = pbng_partition_slice_kept(comm, s, nparts, elem_colors, out, t);
  PetscCall(pbng_mesh_slice_destroy(s)); /* also after an error */
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_grid_ptscotch(MPI_Comm comm, const pbng_grid *g, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t)
{
  pbng_mesh_slice s;
  int64_t nnodes, nelems, ncells;
  const double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  pbng_grid_counts(g, &nnodes, &nelems, &ncells);
  PetscCheck(nparts >= 1 && nparts <= nnodes, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s: %" PRId64 " nodes cannot be split over %d parts", g->source, nnodes,
             nparts);
  int rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(pbng_grid_slice_of_process(g, rank, size, &s));
  t->generate = MPI_Wtime() - t0;
  PetscCall(pbng_partition_slice_ptscotch(comm, &s, nparts, elem_colors, out, t));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_parts_destroy(pbng_parts *out)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < out->nlocal; ++k) PetscCall(pbng_submesh_destroy(&out->sub[k]));
  PetscCall(PetscFree(out->sub));
  PetscCall(PetscFree(out->set_name));
  memset(out, 0, sizeof(*out));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_parts_shape(const pbng_parts *pp, pbng_mesh *shape)
{
  PetscFunctionBeginUser;
  memset(shape, 0, sizeof(*shape));
  shape->etype = pp->etype, shape->nen = pp->etype->nodes, shape->nnodes = pp->nnodes, shape->nelems = pp->nelems;
  PetscCall(PetscStrncpy(shape->source, pp->source, sizeof(shape->source)));
  for (int t = 0; t < pp->nsets; ++t) PetscCall(pbng_mesh_add_node_set(shape, pp->set_name[t], 0, NULL));
  PetscFunctionReturn(0);
}
