/* Built-in structured tetrahedral meshes for the paper's scenes. */
#ifndef PBNG_MESH_GENERATE_H
#define PBNG_MESH_GENERATE_H

#include "mesh/mesh.h"

/* How a generated grid is made of elements (-element, -tet_split): hexahedra (one per cell) or
 * tetrahedra, five per cell ("unbiased", the split alternating with the cell parity) or six
 * ("biased": two prisms of three tetrahedra each, the same in every cell, so a preferred direction).
 * High-order kinds put their edge, face and interior nodes on the order-times refined grid. */
typedef enum { PBNG_TET_SPLIT_FIVE = 0, PBNG_TET_SPLIT_SIX } pbng_tet_split;
typedef struct {
  pbng_element_kind kind;
  pbng_tet_split split;
} pbng_grid_elements;

/* A box [lo, hi] with n[0] x n[1] x n[2] corner vertices (each >= 2), n - 1 cells per axis, made of
 * el's elements; nodes in grid order (i fastest) after dropping grid points no element uses, elements
 * in cell order. For tet4 with five per cell this is pbng_generate_box. */
PetscErrorCode pbng_generate_grid(const int64_t n[3], const double lo[3], const double hi[3], const pbng_grid_elements *el, pbng_mesh *mesh);

/* The pieces of pbng_generate_grid's numbering, for generating a slice of a grid (mesh/generate_slice.h):
 * elements per cell; the point grid's dimensions m (order (n - 1) + 1 per axis: corner vertices and the
 * high-order kinds' edge, face and interior nodes); the elements of cell c (cells in grid order, i fastest)
 * as indices of that point grid, per_cell rows of the kind's node count, returning how many; the rest
 * position of point g. */
int pbng_grid_elements_per_cell(const pbng_grid_elements *el);
void pbng_grid_fine_dims(const int64_t n[3], const pbng_grid_elements *el, int64_t m[3]);
int pbng_grid_cell_elements(const pbng_grid_elements *el, const int64_t n[3], int64_t cell, int64_t *nodes);
void pbng_grid_point(const int64_t m[3], const double lo[3], const double hi[3], int64_t g, double X[3]);

/* A box [lo, hi] with n[0] x n[1] x n[2] vertices (each >= 2); every grid cell is split into 5
 * tetrahedra, the split alternating with the cell parity (i + j + k) so the mesh is conforming.
 * Vertex (i, j, k) has index i + n0 (j + n1 k). Elements follow cell order, 5 per cell.
 * Res-N of the paper: n = (N, N, N) on the unit cube: N^3 vertices, 5 (N-1)^3 tetrahedra. */
PetscErrorCode pbng_generate_box(const int64_t n[3], const double lo[3], const double hi[3], pbng_mesh *mesh);

/* Res-N unit cube (Sec. 10.1): N corner vertices per axis; el NULL: linear tetrahedra, five per cell. */
PetscErrorCode pbng_generate_res_box(int res, const pbng_grid_elements *el, pbng_mesh *mesh);

/* Bar [0,L] x [0,1] x [0,1] with res vertices across and round(L (res-1)) + 1 along x (Sec. 10.4). */
PetscErrorCode pbng_generate_bar(int res, double length, const pbng_grid_elements *el, pbng_mesh *mesh);

/* Two unit blocks stacked along y with a gap (gap <= 0: one cell, h = 1/(res-1)): [0,1] x [0,1] x [0,1]
 * (node set "lower_block") and [0,1] x [1+gap, 2+gap] x [0,1] ("upper_block", its top face
 * "upper_top"), res^3 vertices each (Sec. 10.3; coarse levels keep the fine level's gap).
 * When k > 0, every node of the lower block's top face is bound to the node above it on the upper
 * block's bottom face by an isotropic weak constraint of stiffness k (Eq. 18-19, weights 1). */
PetscErrorCode pbng_generate_stacked_blocks(int res, double gap, double k, pbng_mesh *mesh);
/* Its pieces, for making slices of it (mesh/generate_slice.h): the two boxes [lo[b], hi[b]] (b = 0 lower, 1 upper; the
 * nodes of the upper numbered after the lower's res^3), the n-th of the res^2 bindings of stiffness k (n = i + res kz:
 * node (i, res - 1, kz) of the lower block to (i, 0, kz) of the upper; NULL or pbng_weak_constraint_init's message),
 * and whether node id is in node set `set` of pbng_stacked_blocks_sets (lower_block, upper_block, upper_top). */
void pbng_stacked_blocks_boxes(int res, double gap, double lo[2][3], double hi[2][3]);
const char *pbng_stacked_blocks_binding(int res, int64_t n, double k, pbng_weak_constraint *c);
int pbng_stacked_blocks_node_in_set(int res, int64_t id, int set);
extern const char *const pbng_stacked_blocks_sets[3];

#endif
