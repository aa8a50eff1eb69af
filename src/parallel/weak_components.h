/* PBNG updates the nodes of a weak constraint together (methods/pbng/sweep.c), so the partition puts every set of
 * nodes connected through weak constraints into one part, that of its lowest node (pbng_partition_nodes's rule,
 * parallel/partition.h), here on distributed data: the slices' constraints (mesh/slice.h) and each node's part held by
 * its slice's process. Each connected set is found by its least node id, spread by rounds of minimum labels between
 * the constraints and their nodes (a constraint takes the least label of its nodes, a node the least of its
 * constraints') with pointer jumping (a node takes its label's label), until no label changes: a few rounds for sets
 * of a few constraints, about the logarithm of a long chain's length. */
#ifndef PBNG_PARALLEL_WEAK_COMPONENTS_H
#define PBNG_PARALLEL_WEAK_COMPONENTS_H

#include <mpi.h>
#include "mesh/slice.h"

/* Collective: part[s->node_end - s->node_begin] of the slice's nodes changed so that each node of a weak constraint
 * lies in the part of the lowest node connected to it through weak constraints (node_range: every slice's node range,
 * as pbng_slice_ranges's); group[i] (same length) that lowest node's id, a node's own id outside any constraint;
 * *rounds the labelling rounds taken. */
PetscErrorCode pbng_keep_weak_constraints_together(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *node_range, int32_t *part,
                                                   int64_t *group, int *rounds);

/* Collective: each part left empty (a small level split over many parts, or after the groups were moved) takes the
 * group with the highest id of the part holding the most nodes (the same choice on every process; part and group
 * as above, of the slice's nnodes nodes). */
PetscErrorCode pbng_fill_empty_parts(MPI_Comm comm, int64_t nnodes, const int64_t *group, int nparts, int32_t *part);

#endif
