/* Partitioning a mesh with no process holding it whole (pbng-partition -partitioner ptscotch, and pbng's on-the-fly
 * path with it): each process generates its slice of a grid (a contiguous range of cells and of nodes,
 * mesh/generate_slice.h) or reads its rows of an HDF5 mesh file (io/mesh_h5.h), the processes build the distributed node graph (parallel/dist_graph.h), color it as
 * pbng_color_nodes does (parallel/parallel_coloring.h), color the elements as pbng_color_elements does (the PBD/XPBD
 * constraint colors, parallel/parallel_element_coloring.h), partition it with PT-Scotch (parallel/ptscotch_partition.h)
 * and build every part's piece from the distributed data (parallel/submesh_migrate.h). The pieces equal those
 * of the serial path (pbng_submesh_extract) with the same parts, the coloring equals the serial one, so runs on
 * them are bitwise those of any other partition. Weak constraints (the slices' ranges of them, mesh/slice.h) enter the
 * node graph as edges (so the coloring stays pbng_color_nodes's, and PT-Scotch sees them), get their block and PBD/XPBD
 * colors (parallel/parallel_weak_coloring.h), keep their connected nodes in one part (parallel/weak_components.h) and
 * go into the pieces as pbng_submesh_extract puts them. */
#ifndef PBNG_PARALLEL_DISTRIBUTED_PARTITION_H
#define PBNG_PARALLEL_DISTRIBUTED_PARTITION_H

#include "mesh/generate_slice.h"
#include "parallel/submesh_migrate.h"

/* Wall seconds of each phase on this process (generate: making the slice, generated or read; coloring: the nodes'
 * and the elements'), and the colorings' exchange rounds (the more of the two). */
typedef struct {
  double generate, graph, coloring, partition, migration;
  int rounds;
} pbng_partition_times;

/* This process's pieces of a partitioned mesh and what every process knows of the whole mesh. */
typedef struct {
  int nparts, first, nlocal; /* this process holds parts first .. first + nlocal - 1 (pbng_parts_first) */
  pbng_submesh *sub;         /* [nlocal] */
  int64_t nnodes, nelems, nweak; /* the whole mesh's */
  const pbng_element_type *etype;
  int ncolors;
  int nelem_colors;          /* PBD/XPBD element colors over the whole mesh (every piece's sub->cc.elem) */
  int nweak_colors;          /* PBD/XPBD weak-constraint colors (with the element colors; sub->cc.weak) */
  int nblock_colors;         /* PBNG's weak-constraint block colors (sub->cc.block) */
  double extent;             /* the whole mesh's largest extent (as pbng_mesh_extent) */
  int nsets;                 /* the mesh's node sets (every piece has them all, restricted to its nodes) */
  char (*set_name)[64];      /* [nsets] */
  char source[PETSC_MAX_PATH_LEN];
} pbng_parts;

/* Collective: the grid cut into nparts parts over comm's processes (any nparts >= 1; a process may hold none). With
 * elem_colors, also the PBD/XPBD element (and weak-constraint) colors (parallel/parallel_element_coloring.h: an element graph whose memory
 * grows with the element pairs around each node, tens of times the node graph's: every pair of elements around each node is sent once), else the pieces have none. */
PetscErrorCode pbng_partition_grid_ptscotch(MPI_Comm comm, const pbng_grid *g, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t);
/* Collective: the mesh of the slices (s: this process's, e.g. read from a file: io/mesh_h5.h; destroyed here) cut into
 * nparts parts, as above; t->generate is left to the caller. */
PetscErrorCode pbng_partition_slice_ptscotch(MPI_Comm comm, pbng_mesh_slice *s, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t);
/* The same, the slice kept (e.g. to add what the pieces find to it and partition it again: contact/bindings.h). */
PetscErrorCode pbng_partition_slice_kept(MPI_Comm comm, const pbng_mesh_slice *s, int nparts, int elem_colors, pbng_parts *out, pbng_partition_times *t);
PetscErrorCode pbng_parts_destroy(pbng_parts *out);
/* The whole mesh as far as every process knows it, without nodes and elements: element layout, counts, source and
 * the node sets' names (no member), e.g. for the partitioned file's layout or a process's empty piece
 * (pbng_submesh_empty). Free with pbng_mesh_destroy. */
PetscErrorCode pbng_parts_shape(const pbng_parts *pp, pbng_mesh *shape);

#endif
