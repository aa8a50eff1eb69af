/* A slice of a global mesh that no process holds whole: one process's contiguous range of elements (rows
 * of global node ids, the serial mesh's numbering) and the rest positions of its contiguous range of
 * nodes. The slices of all processes cover every element and every node exactly once, in increasing
 * ranges by rank. It is the input of the parallel partitioning (parallel/distributed_partition.h);
 * generated grids make one without the whole mesh (mesh/generate_slice.h). Global ids are int32, as the
 * serial mesh's (mesh/mesh.h). */
#ifndef PBNG_MESH_SLICE_H
#define PBNG_MESH_SLICE_H

#include "mesh/mesh.h"

typedef struct {
  int64_t nglobal_nodes, nglobal_elems;
  const pbng_element_type *etype; /* the one kind (slices of meshes mixing kinds are not made yet) */
  int nen;                        /* nodes per element row */
  int64_t node_begin, node_end;   /* this slice's nodes [node_begin, node_end) */
  double *X;                      /* [node_end - node_begin][3] their rest positions */
  int64_t elem_begin, elem_end;   /* this slice's elements [elem_begin, elem_end) */
  int32_t *elems;                 /* [elem_end - elem_begin][nen] their nodes, global ids */
  char source[PETSC_MAX_PATH_LEN]; /* what the mesh is, for messages ("Res-8 box") */
} pbng_mesh_slice;

PetscErrorCode pbng_mesh_slice_destroy(pbng_mesh_slice *s);

#endif
