/* The checks pbng_mesh_validate makes on a whole mesh, made on the slices of a mesh that no process holds whole
 * (mesh/slice.h, e.g. read from an HDF5 mesh file), and the processes' agreement on an error: every process stops
 * with the same message, the one the serial check would give first. */
#ifndef PBNG_PARALLEL_SLICE_CHECK_H
#define PBNG_PARALLEL_SLICE_CHECK_H

#include <mpi.h>
#include "mesh/slice.h"

/* Collective: key orders the processes' errors (INT64_MAX: none here; the least key wins, its message msg[len]
 * reaches every process). Returns, in *failed, whether any process had one; msg then holds the winner's message. */
PetscErrorCode pbng_agree_on_first_error(MPI_Comm comm, int64_t key, char *msg, size_t len, int *failed);
/* The same, returning the agreed error (PETSC_ERR_FILE_UNEXPECTED, msg) on every process when there is one. */
PetscErrorCode pbng_stop_on_first_error(MPI_Comm comm, int64_t key, char *msg, size_t len);

/* The rest positions of the nodes a slice's elements and weak constraints use: its own, and those of other slices'
 * ranges (foreign[nforeign], increasing, from pbng_slice_foreign_nodes), asked of them once. A node's local index is
 * its place in the slice's range, or after them its place among the foreign nodes. */
typedef struct {
  const pbng_mesh_slice *s;
  PetscInt nforeign, *foreign;
  double (*Xforeign)[3];
} pbng_slice_positions;

/* Collective. */
PetscErrorCode pbng_slice_positions_create(MPI_Comm comm, const pbng_mesh_slice *s, pbng_slice_positions *p);
PetscErrorCode pbng_slice_positions_destroy(pbng_slice_positions *p);
/* The local index of global node id (-1: not used by the slice), and the position of local node `local`. */
int64_t pbng_slice_positions_local(const pbng_slice_positions *p, int64_t id);
const double *pbng_slice_positions_of(const pbng_slice_positions *p, int64_t local);

/* Collective: the slices' coordinates are finite, and their elements (whose node ids must be in range) are neither
 * degenerate nor inverted: linear tetrahedra by their volume (|V| > 1e-12 h^3) and one orientation for all, the
 * tetrahedra of a mesh whose every tetrahedron is negative re-oriented (nodes 2 and 3 swapped) as
 * pbng_mesh_validate does; other kinds by the element layer's det J check. Errors (every process the same) name
 * s->source and the element, its record being its global id; last, no two elements on the same nodes anywhere in the
 * mesh (mesh/repeated_elements.h: each element sent to the process of its smallest node). */
PetscErrorCode pbng_slice_validate(MPI_Comm comm, pbng_mesh_slice *s);

#endif
