/* The pieces of a partitioned mesh (parallel/submesh.h) built from distributed data only: the slices
 * (mesh/slice.h), and each node's part and color held by its slice's process. Parts go to processes in
 * contiguous blocks (process r builds parts pbng_parts_first(P, N, r) .. pbng_parts_first(P, N, r + 1) - 1).
 * Every piece equals pbng_submesh_extract's of the whole mesh with the same parts and colors: the owned
 * nodes in global order, then the ghosts in global order, the elements touching an owned node in global
 * order, global ids, owners and colors. The slices' elements and owned nodes go to the processes of
 * their parts (one all-to-all each, a process's own share read in place), the ghosts' positions, owners
 * and colors are asked of the nodes' slices, and so are the node sets' memberships of every node of a piece
 * (parallel/slice_sets.h), and the PBD/XPBD colors of the elements travel with them (sub->cc). The weak constraints
 * go to the processes of their nodes' parts like the elements, with their block and PBD/XPBD colors: a piece holds
 * those with a node owned there, in global order, their nodes outside it made ghosts. */
#ifndef PBNG_PARALLEL_SUBMESH_MIGRATE_H
#define PBNG_PARALLEL_SUBMESH_MIGRATE_H

#include "parallel/dist_graph.h"
#include "parallel/submesh.h"

/* The first part of process r when nparts parts go to size processes in contiguous blocks (r = size: nparts). */
static inline int pbng_parts_first(int nparts, int size, int r) { return (int)((int64_t)nparts * r / size); }
/* The process holding part p: the last r with pbng_parts_first(r) <= p. */
static inline int pbng_parts_process(int nparts, int size, int p)
{
  int lo = 0, hi = size - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (pbng_parts_first(nparts, size, mid) <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The colorings of the slice's items that the pieces carry: its nodes' (PBNG), its elements' and its weak constraints'
 * (PBD/XPBD; NULL: not computed) and its weak constraints' blocks (PBNG; NULL when the mesh has none), each array of
 * this process's slice, with the number of colors over all. */
typedef struct {
  const int32_t *node, *elem, *weak, *block;
  int nnode, nelem, nweak, nblock;
} pbng_slice_colors;

/* Collective: this process's pieces sub[0 .. its part count) of the mesh of the slices (s, this process's; range:
 * every slice's node range, as pbng_dist_graph's), from part[] of the slice's nodes and the colorings c. A part without
 * an owned node or an element is an error on every process. */
PetscErrorCode pbng_submesh_migrate(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *range, const int32_t *part, const pbng_slice_colors *c,
                                    int nparts, pbng_submesh *sub);

#endif
