/* Node partition for the distributed solver: METIS k-way on the node graph (two nodes adjacent when
 * they share an element), each node weighted by its number of elements (the cost of its update). */
#ifndef PBNG_PARALLEL_PARTITION_H
#define PBNG_PARALLEL_PARTITION_H

#include "parallel/coloring.h"

/* part[i] in 0..nparts-1 for every node; nparts = 1 puts everything in part 0. Deterministic for a
 * given mesh and nparts (METIS seeded). Nodes connected through weak constraints end up in one part
 * (that of the lowest of them), since PBNG updates a weak constraint's nodes together. */
PetscErrorCode pbng_partition_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int nparts, int32_t *part);

/* The alternative: METIS_PartMeshDual (elements adjacent when they share a face), node owners as
 * METIS derives them from the element partition. pbng-partition -graph dual uses it. */
PetscErrorCode pbng_partition_nodes_dual(const pbng_mesh *mesh, int nparts, int32_t *part);

#endif
