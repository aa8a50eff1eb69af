/* The node coloring of parallel/coloring.h (greedy in node order: each node takes the least color none
 * of its lower-id neighbours has) computed on a distributed node graph (parallel/dist_graph.h), equal to
 * pbng_color_nodes's for a mesh without weak constraints. Jones-Plassmann with the lower global id first:
 * a node is colored once all its lower-id neighbours are, which is exactly when the serial greedy sweep
 * reaches it with those colors known. Each process colors every node whose lower neighbours it knows,
 * sends the newly colored nodes that other processes' nodes wait for, and repeats: the rounds follow the
 * chains of waiting across processes (with node ranges in id order, about one round per process). */
#ifndef PBNG_PARALLEL_PARALLEL_COLORING_H
#define PBNG_PARALLEL_PARALLEL_COLORING_H

#include "parallel/dist_graph.h"

/* Collective: color[g->nrows] of this process's rows, *ncolors over all; *rounds the exchange rounds taken. */
PetscErrorCode pbng_color_dist_graph(const pbng_dist_graph *g, int32_t *color, int *ncolors, int *rounds);

#endif
