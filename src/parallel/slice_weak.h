/* The weak constraints of a mesh that no process holds whole (mesh/slice.h): each process gives a share of them, made
 * or read anywhere (a weak-constraint file read in shares: io/weak_file_shares.h; the stacked blocks' bindings
 * generated in shares: mesh/generate_slice.h; the fine level's springs carried to a coarse one: parallel/weak_levels.h),
 * and the slices end up holding contiguous, balanced ranges of the mesh's constraint list: process r of P the
 * constraints [W r / P, W (r + 1) / P) of W, in the order the serial mesh lists them (pbng_mesh_add_weak_constraints:
 * the mesh's own first, then each addition's in turn). */
#ifndef PBNG_PARALLEL_SLICE_WEAK_H
#define PBNG_PARALLEL_SLICE_WEAK_H

#include <mpi.h>
#include "mesh/slice.h"

/* The process whose balanced range [W r / P, W (r + 1) / P) of W = total items holds item id. */
int pbng_balanced_owner(int64_t id, int64_t total, int size);

/* Collective: appends every process's n constraints c (global node ids, checked by the caller) to the mesh's list,
 * process r's after those of processes 0 .. r - 1, and rebalances the slices' ranges. */
PetscErrorCode pbng_slice_add_weak(MPI_Comm comm, pbng_mesh_slice *s, int64_t n, const pbng_weak_constraint *c);

#endif
