/* Rest geometry of the elements. Linear tetrahedra (Eq. 15, the fast path): B = Dm^{-1} and V per
 * element, stored once per bitwise-distinct rest shape. Elements reference their shape by index, so a structured mesh (the
 * paper's Res-N boxes: 10 tetrahedron shapes per cell size, a few hundred to ~1,250 bitwise-distinct
 * after rounding of the grid coordinates) reads 20 bytes per element visit instead of 96, and an
 * unstructured one pays 4 bytes more than storing the shape in the element.
 * Every other kind (seed Alg. 3): per element and quadrature point q, V_q = w_q |det J_q| and the
 * physical shape gradients dN_a/dX (pbng_element_precompute), with the kind's reference data shared. */
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
  pbng_tet_shape *shapes;   /* [nshapes] (linear tetrahedra) */
  pbng_tet_record *records; /* [nelems], huge pages (linear tetrahedra) */
  pbng_element_reference *ref; /* other kinds: the reference data; NULL for linear tetrahedra */
  int nen, nq;              /* nodes and quadrature points per element */
  double *qV;               /* [nelems][nq]: V_q */
  double *qgrad;            /* [nelems][nq][nen][3]: dN_a/dX at quadrature point q */
} pbng_geometry;

/* Computes every element's rest shape from dm->X and deduplicates bitwise-identical ones.
 * Errors on a non-positive rest volume, naming the element's global index. */
PetscErrorCode pbng_geometry_create(const pbng_dmesh *dm, pbng_geometry *geo);
PetscErrorCode pbng_geometry_destroy(pbng_geometry *geo);

static inline const pbng_tet_shape *pbng_geometry_shape(const pbng_geometry *geo, int32_t e)
{
  return &geo->shapes[geo->records[e].shape];
}

/* F at a quadrature point of an element with nodes t: sum_b x_b (x) dN_b/dX (grad [nen][3]). */
static inline void pbng_qp_deformation_gradient(int nen, const int32_t *t, const double *grad, const double *x, double F[9])
{
  for (int k = 0; k < 9; ++k) F[k] = 0.0;
  for (int b = 0; b < nen; ++b) {
    const double *xb = &x[3 * t[b]], *gb = &grad[3 * b];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) F[3 * r + s] += xb[r] * gb[s];
  }
}

/* Other kinds: V_q of element e, and dN/dX of its nodes at quadrature point q ([nen][3]). */
static inline const double *pbng_geometry_qp_volumes(const pbng_geometry *geo, int32_t e) { return &geo->qV[(int64_t)geo->nq * e]; }
static inline const double *pbng_geometry_qp_gradients(const pbng_geometry *geo, int32_t e, int q)
{
  return &geo->qgrad[3 * (int64_t)geo->nen * ((int64_t)geo->nq * e + q)];
}

#endif
