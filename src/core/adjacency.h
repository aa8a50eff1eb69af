/* The element layer's encoding of node-to-element adjacency (pbng_dmesh's adj): local node a of
 * element e of a kind with `nodes` nodes per element is the entry nodes * e + a. Code outside the
 * element layer encodes and decodes entries only through these functions; the linear-tetrahedron
 * fast path has its own shift-and-mask versions. */
#ifndef PBNG_CORE_ADJACENCY_H
#define PBNG_CORE_ADJACENCY_H

#include <stdint.h>

static inline int32_t pbng_adj_entry(int nodes, int32_t e, int a) { return nodes * e + a; }
static inline int32_t pbng_adj_element(int nodes, int32_t entry) { return entry / nodes; }
static inline int pbng_adj_local_node(int nodes, int32_t entry) { return (int)(entry % nodes); }

/* Linear tetrahedra (4 nodes): the same decoding as shifts. */
static inline int32_t pbng_tet4_adj_element(int32_t entry) { return entry >> 2; }
static inline int pbng_tet4_adj_local_node(int32_t entry) { return (int)(entry & 3); }

/* Element-node visits of one sweep over every element: each element is visited once per node. */
static inline double pbng_element_node_visits(int nodes, int64_t nelems) { return (double)nodes * (double)nelems; }

#endif
