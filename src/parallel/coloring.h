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

/* Constraint coloring for PBD/XPBD (Sec. 9): elements of one color share no node (an element's two
 * constraints, Eq. 22-23, are solved one after the other by one thread, so the element is the unit),
 * greedy in element order. Any number of colors. */
PetscErrorCode pbng_color_elements(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors);
/* The same for the weak constraints among themselves (PBD/XPBD solve them in their own phase). */
PetscErrorCode pbng_color_weak_constraints(const pbng_mesh *mesh, int32_t *color, int *ncolors);

/* Both constraint colorings, for every element and weak constraint of a mesh (or of a piece). */
typedef struct {
  int nelem_colors, nweak_colors;
  int32_t *elem; /* [nelems], NULL when not computed */
  int32_t *weak; /* [nweak] */
} pbng_constraint_colors;

PetscErrorCode pbng_constraint_colors_compute(const pbng_mesh *mesh, const pbng_node_elements *adj, pbng_constraint_colors *cc);
PetscErrorCode pbng_constraint_colors_destroy(pbng_constraint_colors *cc);

/* 1 when no element or weak constraint has two nodes of one color. */
int pbng_coloring_is_valid(const pbng_mesh *mesh, const int32_t *color);

#endif
