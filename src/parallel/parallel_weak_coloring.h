/* The colorings of the weak constraints (parallel/coloring.h) computed from the slices (mesh/slice.h) and the
 * distributed node graph (parallel/dist_graph.h, whose edges include the weak constraints'), equal to the serial ones:
 *  - PBNG's weak-constraint blocks (pbng_color_weak_blocks: greedy in constraint order, a block taking the least
 *    color of no earlier block that touches a common element or weak constraint, Sec. 9 with the block's nodes as one
 *    super-node): blocks a and b conflict when a node of a and a node of b are equal or neighbours in the node graph;
 *  - PBD/XPBD's constraint colors (pbng_color_weak_constraints): constraints conflict when they share a node.
 * Each conflict graph is built like the element graph (parallel/parallel_element_coloring.h): each node's process
 * lists the constraints at the node (and, for the blocks, those at its neighbours, sent by their processes) and sends
 * every constraint its conflicts there; its rows are the slices' weak-constraint ranges. It is then colored by the
 * Jones-Plassmann of parallel/parallel_coloring.h with the lower constraint id first: the serial greedy sweep. */
#ifndef PBNG_PARALLEL_PARALLEL_WEAK_COLORING_H
#define PBNG_PARALLEL_PARALLEL_WEAK_COLORING_H

#include "parallel/dist_graph.h"

/* Collective: block[s->weak_end - s->weak_begin] the block colors of the slice's constraints, *nblock_colors over all,
 * and when pbd (else weak is not touched) weak[] their PBD/XPBD colors, *nweak_colors over all; *rounds the most
 * exchange rounds a coloring took. nodes: the slices' node graph. */
PetscErrorCode pbng_color_slice_weak(const pbng_dist_graph *nodes, const pbng_mesh_slice *s, int pbd, int32_t *block, int *nblock_colors, int32_t *weak,
                                     int *nweak_colors, int *rounds);

#endif
