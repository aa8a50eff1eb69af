/* One rank's piece of the global mesh: its owned nodes, the elements touching them and the other
 * nodes of those elements (ghosts), with global ids (the input's numbering), owners and colors.
 * It is what rank 0 sends to each rank when partitioning on the fly, and what a partitioned mesh
 * file stores per part (with the weak constraints that touch the owned nodes, whose other nodes are
 * ghosts too); pbng_dmesh_create builds the subdomain from it. */
#ifndef PBNG_PARALLEL_SUBMESH_H
#define PBNG_PARALLEL_SUBMESH_H

#include <mpi.h>
#include "mesh/mesh.h"
#include "parallel/coloring.h"

typedef struct {
  pbng_mesh mesh;        /* local nodes (owned first) and elements in local indices; node sets restricted */
  int64_t nglobal_nodes, nglobal_elems;
  int32_t nowned;        /* local nodes [0, nowned) are owned */
  int ncolors;           /* global number of colors */
  int64_t *global_node;  /* [mesh.nnodes] */
  int64_t *global_elem;  /* [mesh.nelems] */
  int32_t *owner;        /* [mesh.nnodes] */
  int32_t *color;        /* [mesh.nnodes] */
  int64_t nglobal_weak;  /* weak constraints: mesh.weak holds those with a node owned here */
  int64_t *global_weak;  /* [mesh.nweak] their global indices */
  pbng_constraint_colors cc; /* PBD/XPBD colors of the piece's elements and weak constraints (elem NULL: none) */
} pbng_submesh;

/* The piece of part p of the global mesh (color and part given per global node; the constraint
 * colors of every element and weak constraint, or NULL). */
PetscErrorCode pbng_submesh_extract(const pbng_mesh *mesh, const int32_t *color, int ncolors, const pbng_constraint_colors *cc,
                                    const int32_t *part, int p, pbng_submesh *sub);
/* A piece with no node and no element (a rank that holds no part of a coarse level: docs/multilevel.md#levels-on-fewer-ranks),
 * with the mesh's global counts, colors and node set names. */
PetscErrorCode pbng_submesh_empty(const pbng_mesh *mesh, int ncolors, const pbng_constraint_colors *cc, pbng_submesh *sub);
PetscErrorCode pbng_submesh_destroy(pbng_submesh *sub);

/* Point-to-point transfer of a submesh (rank 0 to the others). When the sender cannot produce a
 * piece it sends a failure instead, and pbng_submesh_recv returns error `failure_code`. */
PetscErrorCode pbng_submesh_send(MPI_Comm comm, const pbng_submesh *sub, int dest);
PetscErrorCode pbng_submesh_send_failure(MPI_Comm comm, int dest);
PetscErrorCode pbng_submesh_recv(MPI_Comm comm, int source, PetscErrorCode failure_code, pbng_submesh *sub);

#endif
