/* Node coloring for PBNG (Sec. 9): nodes of one color share no element and no weak constraint, so
 * they can be updated in parallel without races. Greedy in node order: each element (and weak
 * constraint) keeps the set S_e of colors used by its nodes; a node takes the least color not in the
 * union of S_e over its elements and weak constraints. */
#ifndef PBNG_PARALLEL_COLORING_H
#define PBNG_PARALLEL_COLORING_H

#include "mesh/mesh.h"

/* Node -> incident elements (CSR): for node i, entries start[i] .. start[i+1]-1 of `entry`, each
 * 4 * element + local vertex index, in increasing element order. */
typedef struct {
  int64_t nnodes;
  int64_t *start;  /* [nnodes + 1] */
  int32_t *entry;  /* [nelems * nodes_per_element]: nodes_per_element * element + vertex */
} pbng_node_elements;

PetscErrorCode pbng_node_elements_build(const pbng_mesh *mesh, pbng_node_elements *adj);
PetscErrorCode pbng_node_elements_destroy(pbng_node_elements *adj);

/* color[i] for every node; *ncolors the number used. */
PetscErrorCode pbng_color_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors);

/* 1 when no element or weak constraint has two nodes of one color. */
int pbng_coloring_is_valid(const pbng_mesh *mesh, const int32_t *color);

#endif
