/* The named node sets of a mesh that no process holds whole (mesh/slice.h): each set's members, read in shares by
 * any process (io/mesh_h5.h reads contiguous rows of /sets/<name>), go to the processes whose slices hold the nodes,
 * which mark them in their nodes' membership bits; the pieces built from the slices (parallel/submesh_migrate.h)
 * then ask those processes for the membership of each of their nodes, owned and ghosts, the way the migration asks
 * for the ghosts' positions. A piece's sets are what pbng_submesh_extract gives: every set of the mesh in its order,
 * its members the piece's nodes in it in increasing local index (sets with no local member named, empty). Any number
 * of sets: (nsets + 63) / 64 words per node on the slices, and as many per node asked. */
#ifndef PBNG_PARALLEL_SLICE_SETS_H
#define PBNG_PARALLEL_SLICE_SETS_H

#include "parallel/submesh.h"
#include "mesh/slice.h"

/* Collective: n members given here as pairs[n][2] = (set index, global node id), any order (ids in range: checked
 * before), marked in the slices holding the nodes (their sets named: pbng_mesh_slice_name_sets). */
PetscErrorCode pbng_slice_sets_add_members(MPI_Comm comm, pbng_mesh_slice *s, int64_t n, const int64_t *pairs);

/* Collective: each of this process's pieces sub[0 .. nlocal) (global_node set, no sets yet) given the slices' sets,
 * restricted to its nodes (range: every slice's node range, as pbng_slice_ranges's). */
PetscErrorCode pbng_submesh_take_slice_sets(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *range, int nlocal, pbng_submesh *sub);

#endif
