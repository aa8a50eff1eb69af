/* Rest geometry of the linear tetrahedra (Eq. 15): B = Dm^{-1} and V per element, stored once per
 * bitwise-distinct rest shape. Elements reference their shape by index, so a structured mesh (the
 * paper's Res-N boxes: 10 tetrahedron shapes per cell size, a few hundred to ~1,250 bitwise-distinct
 * after rounding of the grid coordinates) reads 20 bytes per element visit instead of 96, and an
 * unstructured one pays 4 bytes more than storing the shape in the element. */
#ifndef PBNG_SOLVERS_GEOMETRY_H
#define PBNG_SOLVERS_GEOMETRY_H

#include "parallel/dmesh.h"

typedef struct {
  double B[9]; /* Dm^{-1}: F = Ds B, dN/dX rows (pbng_tet_rest_shape) */
  double V;    /* rest volume V_e^0 */
} pbng_tet_shape;

typedef struct {
  int32_t node[4]; /* local node indices */
  int32_t shape;   /* index into the shape table */
} pbng_tet_record;

typedef struct {
  int32_t nshapes, nelems;
  pbng_tet_shape *shapes;   /* [nshapes] */
  pbng_tet_record *records; /* [nelems], huge pages */
} pbng_geometry;

/* Computes every element's rest shape from dm->X and deduplicates bitwise-identical ones.
 * Errors on a non-positive rest volume, naming the element's global index. */
PetscErrorCode pbng_geometry_create(const pbng_dmesh *dm, pbng_geometry *geo);
PetscErrorCode pbng_geometry_destroy(pbng_geometry *geo);

static inline const pbng_tet_shape *pbng_geometry_shape(const pbng_geometry *geo, int32_t e)
{
  return &geo->shapes[geo->records[e].shape];
}

#endif
