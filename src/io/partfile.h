/* Partitioned mesh files (written by pbng-partition, read by pbng on as many ranks as parts).
 * Layout "pbng-partition-1": every part's piece (pbng_submesh) stored as consecutive rows of
 * concatenated datasets, so that rank p reads rows [offset[p], offset[p+1]) collectively:
 *   /nodes/X float64 [sum n_p, 3], /nodes/global int64, /nodes/owner int32, /nodes/color int32,
 *   /nodes/offset int64 [P+1], /parts/nowned int32 [P],
 *   /elements/nodes int32 [sum m_p, 4] (indices into the part's nodes), /elements/global int64,
 *   /elements/offset int64 [P+1], /elements/color int32 (PBD/XPBD constraint colors),
 *   /sets/NNNN/members int32 (part-local node indices), /sets/NNNN/offset int64 [P+1], attribute name;
 *   /weak/nodes int64 [sum w_p, 8] (part-local node indices, -1 past the last), /weak/weights float64
 *   [sum w_p, 8] (signed a_j), /weak/spring float64 [sum w_p, 5] (k_n, k_t, n), /weak/global int64, /weak/color int32, /weak/block_color int32,
 *   /weak/offset int64 [P+1]: the weak constraints touching each part's owned nodes;
 *   root attributes format, nparts, nnodes, nelements, ncolors, element_kind, extent, nsets, nweak,
 *   nelem_colors, nweak_colors, nblock_colors, source. Files without nweak (older) have no weak constraints; files
 *   without nelem_colors have no PBD/XPBD constraint colors, files without nblock_colors no block colors (the parallel
 *   writer's without -pbd_colors have the block colors only, when the mesh has weak constraints). */
#ifndef PBNG_IO_PARTFILE_H
#define PBNG_IO_PARTFILE_H

#include "parallel/distributed_partition.h"

typedef struct pbng_partfile_writer pbng_partfile_writer;

/* Serial writer (one process). The file is written as "<path>.partial" and renamed on close. */
PetscErrorCode pbng_partfile_create(const char *path, int nparts, int64_t nnodes, int64_t nelems, int ncolors,
                                    const pbng_constraint_colors *cc, const pbng_mesh *mesh, double extent, pbng_partfile_writer **w);
/* Appends the next part's piece (parts in order 0, 1, ...). */
PetscErrorCode pbng_partfile_append(pbng_partfile_writer *w, const pbng_submesh *sub);
PetscErrorCode pbng_partfile_close(pbng_partfile_writer **w, PetscBool success);

/* Collective parallel writer: every process of comm passes its pieces (pp, parallel/distributed_partition.h: parts
 * first .. first + nlocal - 1, the processes' parts in contiguous blocks, in process order) and writes their rows at
 * their offsets (parallel HDF5, collective writes), in the serial writer's layout. The file is written as
 * "<path>.partial" and renamed when every process succeeded (removed otherwise). It has the pieces' weak constraints
 * and their block colors, and the PBD/XPBD constraint colors of the elements and weak constraints when the pieces have
 * them (nelem_colors, nweak_colors); without weak constraints and PBD/XPBD colors it has no colors (no nblock_colors).
 * Every piece has the mesh's node sets in the mesh's order (restricted to its nodes), written as the serial writer
 * writes them. */
PetscErrorCode pbng_partfile_write_parallel(MPI_Comm comm, const char *path, const pbng_parts *pp);

/* 1 when path is an HDF5 file with this version's partitioned-mesh format attribute. Otherwise 0;
 * then, when the file is an HDF5 file all the same but no mesh (damaged, another format version, a checkpoint),
 * why[len] says what it is ("" for meshes: files that are not HDF5, for pbng_mesh_read, and HDF5 meshes with
 * /mesh/rest_positions, such as pbng's results, for pbng_mesh_h5_read: io/mesh_h5.h). */
int pbng_partfile_probe(const char *path, char *why, size_t len);

/* Collective over comm: every rank reads its part (the file must have as many parts as ranks) and
 * the mesh extent. */
PetscErrorCode pbng_partfile_read(MPI_Comm comm, const char *path, pbng_submesh *sub, double *extent);

#endif
