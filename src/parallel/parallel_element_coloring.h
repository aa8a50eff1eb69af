/* The PBD/XPBD constraint coloring of parallel/coloring.h (pbng_color_elements: greedy in element order, each element
 * takes the least color no element sharing a node with it has) computed from the slices (mesh/slice.h), for a mesh
 * without weak constraints. The element graph (two elements adjacent when they share a node) is built distributed
 * like the node graph: every element's nodes go to their node ranges' processes, which list each node's incident
 * elements and send every element its neighbours at that node; its rows are the slices' element ranges. It is then
 * colored by the Jones-Plassmann of parallel/parallel_coloring.h with the lower element id first, which is exactly the
 * serial greedy sweep in element order. */
#ifndef PBNG_PARALLEL_PARALLEL_ELEMENT_COLORING_H
#define PBNG_PARALLEL_PARALLEL_ELEMENT_COLORING_H

#include "parallel/dist_graph.h"

/* Collective: the element graph of the slices' mesh, rows the slices' element ranges (g->range), neighbours' global
 * element ids increasing (weight NULL). Free with pbng_dist_graph_destroy. */
PetscErrorCode pbng_element_graph_build(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g);

/* Collective: color[s->elem_end - s->elem_begin] of the slice's elements, equal to pbng_color_elements's of the whole
 * mesh; *ncolors over all; *rounds the coloring's exchange rounds. */
PetscErrorCode pbng_color_slice_elements(MPI_Comm comm, const pbng_mesh_slice *s, int32_t *color, int *ncolors, int *rounds);

#endif
