/* Node partition by PT-Scotch through PETSc's MatPartitioning, on a distributed node graph
 * (parallel/dist_graph.h): each process passes its rows and gets their parts. The graph and weights
 * are METIS's (parallel/partition.c: the node graph, each node weighted by its incident elements + 1).
 * Deterministic for a given graph, part count and process count: Scotch runs one thread per process (its
 * threads make the partitions differ from run to run), its random generator is reset before each partition,
 * and the strategy is fixed (quality, imbalance 0.01). */
#ifndef PBNG_PARALLEL_PTSCOTCH_PARTITION_H
#define PBNG_PARALLEL_PTSCOTCH_PARTITION_H

#include "parallel/dist_graph.h"

/* Collective: part[g->nrows] in 0..nparts-1 of this process's rows. The graph's rows, adjacency and weights
 * are handed to PETSc (g->start, g->adj, g->weight are NULL afterwards). */
PetscErrorCode pbng_partition_ptscotch(pbng_dist_graph *g, int nparts, int32_t *part);

#endif
