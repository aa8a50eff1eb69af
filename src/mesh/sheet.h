/* Sheets as triangle meshes (issue 18; docs/cloth.md#sheet-meshes): generated grids, and the bending
 * stencils of any triangle mesh (one per interior edge: the two triangles sharing it). Plain arrays,
 * serial (what a partitioner or rank 0 builds before distribution). */
#ifndef PBNG_MESH_SHEET_H
#define PBNG_MESH_SHEET_H

#include <petscsys.h>
#include <stdint.h>
#include "mesh/mesh.h"

typedef struct {
  int64_t nnodes;
  double *X;           /* [nnodes][3] rest positions */
  int64_t ntri;
  int64_t (*tri)[3];   /* corners, counter-clockwise seen from the sheet's normal side */
  int64_t nstencil;
  int64_t (*stencil)[4]; /* x0 x1 the shared edge, x2 the third corner of the triangle in which x0 -> x1
                            runs counter-clockwise, x3 the other's (pbng_bending_rest's order) */
} pbng_sheet;

/* The two triangles of the grid cell a, b, c, d (counter-clockwise) at tri[*t], tri[*t + 1] (*t advanced by 2),
 * split along a-c when the cell's parity is even, else along b-d: the grids' alternating diagonals. */
static inline void pbng_sheet_cell_triangles(int64_t (*tri)[3], int64_t *t, int64_t a, int64_t b, int64_t c, int64_t d, int even)
{
  const int64_t first[3] = {a, b, even ? c : d}, second[3] = {even ? a : b, c, d};
  for (int k = 0; k < 3; ++k) tri[*t][k] = first[k], tri[*t + 1][k] = second[k];
  *t += 2;
}

/* A rectangle of nx x ny vertices (each >= 2) spanning lx along e_u and ly along e_v from the origin o:
 * X(i, j) = o + (i/(nx-1)) lx e_u + (j/(ny-1)) ly e_v, node i + nx j; each cell split along the diagonal
 * alternating with the cell parity (i + j), so that the grid has no preferred diagonal direction;
 * triangles counter-clockwise about e_u x e_v. Stencils are built (pbng_sheet_build_stencils). Errors:
 * fewer than 2 vertices along an axis, a size not positive, e_u and e_v parallel or zero. */
PetscErrorCode pbng_sheet_grid(int64_t nx, int64_t ny, double lx, double ly, const double o[3], const double e_u[3], const double e_v[3],
                               pbng_sheet *sheet);

/* The stencils of sheet's triangles: every edge shared by exactly two triangles, sorted by (smaller,
 * larger) corner id. Errors naming the edge: an edge of three or more triangles (non-manifold), two
 * triangles running the edge the same way (inconsistent orientation), a triangle with a repeated
 * corner or a corner out of range. */
PetscErrorCode pbng_sheet_build_stencils(pbng_sheet *sheet);

PetscErrorCode pbng_sheet_destroy(pbng_sheet *sheet);

/* The sheet as a mesh of element rows: its triangles as tri3 elements, then (with_bending) its stencils
 * as bend4 elements (kinds mixed, rows of 4); tri3 alone without. No node sets. */
PetscErrorCode pbng_mesh_from_sheet(const pbng_sheet *sheet, int with_bending, pbng_mesh *mesh);

/* Appends to a mesh (a sheet mesh or one mixing volumes and sheets, e.g. read from Gmsh) one bend4
 * element per interior edge of its tri3 elements (pbng_sheet_build_stencils: its errors name the edge);
 * the mesh becomes one of mixed kinds. Nothing happens when it has no triangles or already has stencils. */
PetscErrorCode pbng_mesh_add_bending_stencils(pbng_mesh *mesh);

/* Replaces a sheet mesh's elements (tri3, and bend4 stencils if any: dropped) by one cloth6 row per triangle (the
 * GPBD seed's six-dimensional stencil, core/cloth6.h): its corners x0 x1 x2, then for each edge i (from x_{i+1} to
 * x_{i+2}) the third vertex of the triangle across it, or corner i itself where the edge is free (the stencil's
 * rest data reads that as "no neighbour"). Errors: elements of other kinds, a non-manifold edge, inconsistent
 * orientation (naming the edge). */
PetscErrorCode pbng_mesh_cloth_stencils(pbng_mesh *mesh);

#endif
