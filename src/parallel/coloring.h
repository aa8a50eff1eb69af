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

/* Colors of the weak constraints as blocks of PBNG (each updates all its nodes at once): blocks of
 * one color share no element or weak constraint through their nodes (node coloring, Sec. 9, with
 * the block's nodes as one super-node). */
PetscErrorCode pbng_color_weak_blocks(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors);

/* Constraint coloring for PBD/XPBD (Sec. 9): elements of one color share no node (an element's two
 * constraints, Eq. 22-23, are solved one after the other by one thread, so the element is the unit),
 * greedy in element order. Any number of colors. */
PetscErrorCode pbng_color_elements(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors);
/* The same for the weak constraints among themselves (PBD/XPBD solve them in their own phase). */
PetscErrorCode pbng_color_weak_constraints(const pbng_mesh *mesh, int32_t *color, int *ncolors);

/* The colorings beyond the node colors, for every element and weak constraint of a mesh (or of a
 * piece): PBNG's weak-constraint blocks, and PBD/XPBD's constraint colors. */
typedef struct {
  int nblock_colors;
  int32_t *block; /* [nweak] PBNG weak-constraint block colors */
  int nelem_colors, nweak_colors;
  int32_t *elem;  /* [nelems] PBD/XPBD element colors, NULL when not computed */
  int32_t *weak;  /* [nweak] PBD/XPBD weak-constraint colors */
} pbng_constraint_colors;

/* Block colors always; the PBD/XPBD colors when with_pbd. */
PetscErrorCode pbng_constraint_colors_compute(const pbng_mesh *mesh, const pbng_node_elements *adj, PetscBool with_pbd,
                                              pbng_constraint_colors *cc);
PetscErrorCode pbng_constraint_colors_destroy(pbng_constraint_colors *cc);

/* Items 0..n-1 grouped by their color (0..ncolors-1): color c's items are item[start[c] .. start[c+1]),
 * in increasing order (a solver's work list per color). */
typedef struct {
  int ncolors;
  int32_t *start, *item;
} pbng_color_groups;

PetscErrorCode pbng_color_groups_build(int ncolors, int32_t n, const int32_t *color, pbng_color_groups *g);
PetscErrorCode pbng_color_groups_destroy(pbng_color_groups *g);

/* 1 when no element or weak constraint has two nodes of one color. */
int pbng_coloring_is_valid(const pbng_mesh *mesh, const int32_t *color);

#endif
