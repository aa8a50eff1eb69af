/* A weak-constraint file (docs/weak_constraints.md) read by the processes in shares, for the slices of a mesh that no
 * process holds whole (-partitioner ptscotch): process r of P reads the lines that begin in bytes [S r / P,
 * S (r + 1) / P) of the file's S, parses them as the whole-file reader does (mesh/mesh.h: pbng_weak_line_*) and
 * numbers its constraints after those of the lines before (the lines and data lines before it counted by a scan), so
 * that the constraints, their order and every error (the first bad line of the file, named by file and line) are
 * those of pbng_mesh_read_weak_constraints. The constraints join the slices (parallel/slice_weak.h). */
#ifndef PBNG_IO_WEAK_FILE_SHARES_H
#define PBNG_IO_WEAK_FILE_SHARES_H

#include <mpi.h>
#include "mesh/slice.h"

/* Collective: the file's constraints appended to the slices' (node indices checked against s->nglobal_nodes). Errors
 * are every process's alike; the slices are unchanged then. */
PetscErrorCode pbng_slice_read_weak_file(MPI_Comm comm, const char *path, pbng_mesh_slice *s);

#endif
