/* A slice of a global mesh that no process holds whole: one process's contiguous range of elements (rows
 * of global node ids, the serial mesh's numbering), the rest positions of its contiguous range of
 * nodes, which of the mesh's named node sets each of those nodes belongs to, and a contiguous range of the mesh's
 * weak constraints. The slices of all processes cover every element, every node and every weak constraint exactly
 * once, in increasing ranges by rank. It is the input of the parallel partitioning (parallel/distributed_partition.h);
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
  int nsets;                      /* the mesh's node sets (every slice the same, in the serial mesh's order; 0: none) */
  char (*set_name)[64];           /* [nsets] their names */
  int set_words;                  /* 64-bit words of membership per node: (nsets + 63) / 64 */
  uint64_t *set_mask;             /* [node_end - node_begin][set_words]: bit s % 64 of word s / 64 when the node is in set s */
  int64_t nglobal_weak;           /* the mesh's weak constraints (0: none), in the serial mesh's order */
  int64_t weak_begin, weak_end;   /* this slice's constraints [weak_begin, weak_end) of them */
  pbng_weak_constraint *weak;     /* [weak_end - weak_begin] their nodes as global ids */
  char source[PETSC_MAX_PATH_LEN]; /* what the mesh is, for messages ("Res-8 box") */
} pbng_mesh_slice;

/* Names the slice's nsets node sets (names[nsets]), none of its nodes a member yet. */
PetscErrorCode pbng_mesh_slice_name_sets(pbng_mesh_slice *s, int nsets, const char (*names)[64]);
/* Whether the slice's node i (0 .. node_end - node_begin) is in set t. */
static inline int pbng_mesh_slice_in_set(const pbng_mesh_slice *s, int64_t i, int t)
{
  return (int)((s->set_mask[i * s->set_words + t / 64] >> (t % 64)) & 1u);
}
/* The slice's weak constraints' nodes as rows *rows[weak_end - weak_begin][PBNG_WC_MAX_NODES] of global ids, -1 after
 * the last (PetscMalloc'd; the form element rows have, for the graphs built from both). */
PetscErrorCode pbng_mesh_slice_weak_rows(const pbng_mesh_slice *s, int32_t **rows);
PetscErrorCode pbng_mesh_slice_destroy(pbng_mesh_slice *s);

#endif
