/* HDF5 mesh files: the /mesh group of pbng's own result files (docs/output.md), so that a result can be run again as
 * a mesh, and what pbng-convert writes from a Gmsh file:
 *   /mesh/rest_positions float64 [N, 3];
 *   /mesh/tetrahedra integer [M, 4] (0-based node rows), or /mesh/elements integer [M, n] with the root attribute
 *   element naming one volume kind (tet4, tet10, tet20, hex8, hex27, prism6, pyramid5; n its nodes, Gmsh's order);
 *   optionally /sets/<name> integer [K] or [K, 1]: named node sets (Gmsh physical groups, for -fix_group).
 * Read whole on one process (pbng_mesh_h5_read: the mesh the Gmsh reader makes, validated the same way) or in
 * slices, every process its contiguous rows by hyperslabs with collective MPI-IO (pbng_mesh_h5_read_slice, for
 * -partitioner ptscotch: no process holds the whole mesh). */
#ifndef PBNG_IO_MESH_H5_H
#define PBNG_IO_MESH_H5_H

#include <mpi.h>
#include "mesh/mesh.h"
#include "mesh/slice.h"

/* 1 when path is an HDF5 file with /mesh/rest_positions and /mesh/tetrahedra or /mesh/elements (serial, quiet). */
int pbng_mesh_h5_probe(const char *path);

/* The whole mesh (one process), validated as pbng_mesh_validate does (records: the rows of the element dataset).
 * Errors name the file and the dataset or record. */
PetscErrorCode pbng_mesh_h5_read(const char *path, pbng_mesh *mesh);

/* Collective: process r of P reads node rows [N r / P, N (r + 1) / P) and element rows [M r / P, M (r + 1) / P),
 * checks the node ids and validates the slices (parallel/slice_check.h). Errors are every process's alike. Node
 * sets: process r reads entries [K r / P, K (r + 1) / P) of each set of K entries and sends them to the slices of
 * their nodes (parallel/slice_sets.h). */
PetscErrorCode pbng_mesh_h5_read_slice(MPI_Comm comm, const char *path, pbng_mesh_slice *s);

/* Any mesh file: an HDF5 mesh (pbng_mesh_h5_read) or what pbng_mesh_read reads (Gmsh, TetGen). */
PetscErrorCode pbng_mesh_file_read(const char *path, pbng_mesh *mesh);

#endif
