/* A generated box or bar (or the stacked blocks of two_blocks_hanging) as a description (pbng_grid), and any process's
 * slice of it (mesh/slice.h) made without the whole mesh: the node and element ids are pbng_generate_grid's, so a slice's rows
 * and positions are exactly the serial mesh's rows [elem_begin, elem_end) and nodes
 * [node_begin, node_end). Every kind's grid is made (tet4 of either split, tet10, tet20, hex8, hex27):
 * the grid points tet10 and tet20 leave unused are known from a point's place in its cell and the
 * cell's parity, so a point's node id (the used points before it in grid order) is counted in closed
 * form, without the whole grid. */
#ifndef PBNG_MESH_GENERATE_SLICE_H
#define PBNG_MESH_GENERATE_SLICE_H

#include "mesh/generate.h"
#include "mesh/slice.h"

typedef struct {
  int64_t n[3];          /* corner vertices per axis */
  double lo[3], hi[3];   /* the box */
  pbng_grid_elements el; /* the elements */
  /* 1: the stacked blocks of pbng_generate_stacked_blocks (n = res^3, tet4 five per cell; lo and hi unused): two boxes
   * across a gap (gap: pbng_generate_stacked_blocks's), the upper's nodes and elements numbered after the lower's, the
   * node sets lower_block, upper_block and upper_top, and with bind_k > 0 the res^2 bindings of the facing faces */
  int stacked;
  double gap, bind_k;
  char source[PETSC_MAX_PATH_LEN]; /* what pbng_generate_* names this mesh ("Res-8 box") */
} pbng_grid;

/* 1 when slices of grids of these elements can be made; else 0 and why[len] says why. */
int pbng_grid_slice_supported(const pbng_grid_elements *el, char *why, size_t len);
/* The grid's node and element counts (pbng_generate_grid's: used grid points only), and its cells. */
void pbng_grid_counts(const pbng_grid *g, int64_t *nnodes, int64_t *nelems, int64_t *ncells);

/* The slice of nodes [node_begin, node_end) and of the elements of cells [cell_begin, cell_end) (the stacked blocks:
 * the lower box's cells first), with its nodes' node sets; no weak constraints. */
PetscErrorCode pbng_grid_slice_create(const pbng_grid *g, int64_t node_begin, int64_t node_end, int64_t cell_begin, int64_t cell_end,
                                      pbng_mesh_slice *s);

/* Process rank's slice of size processes': an equal share of the cells, of the nodes and of the weak constraints (the
 * stacked blocks' bindings), each in increasing ranges by process (what -partitioner ptscotch generates). */
PetscErrorCode pbng_grid_slice_of_process(const pbng_grid *g, int rank, int size, pbng_mesh_slice *s);

#endif
