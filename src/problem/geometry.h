/* Rest geometry of the elements. Linear tetrahedra (Eq. 15, the fast path): B = Dm^{-1} and V per
 * element, stored once per bitwise-distinct rest shape. Elements reference their shape by index, so a structured mesh (the
 * paper's Res-N boxes: 10 tetrahedron shapes per cell size, a few hundred to ~1,250 bitwise-distinct
 * after rounding of the grid coordinates) reads 20 bytes per element visit instead of 96, and an
 * unstructured one pays 4 bytes more than storing the shape in the element.
 * Every other kind (seed Alg. 3): per element and quadrature point q, V_q = w_q |det J_q| and the
 * physical shape gradients dN_a/dX (pbng_element_precompute), with the kind's reference data shared.
 * When every element is affine (J the same at all its quadrature points: straight-sided tetrahedra,
 * parallelepiped hexahedra, as generated), only J^{-1} and det J are stored per element (80 bytes
 * instead of 8 nq (3 nodes + 1): 992 for tet10) and dN_a/dX = J^{-T} dN_a/dr is formed when used,
 * F_q = (sum_b x_b (x) dN_b/dr(r_q)) J^{-1}: the same values up to round-off, far less memory traffic.
 * A mesh mixing kinds (dmesh kind[]) takes this second path for every element, linear tetrahedra
 * included, each with its kind's reference data; per-element blocks are sized for the largest kind. */
#ifndef PBNG_PROBLEM_GEOMETRY_H
#define PBNG_PROBLEM_GEOMETRY_H

#include "core/bending.h"
#include "core/gpbd_strain.h"
#include "core/membrane.h"
#include "parallel/dmesh.h"

typedef struct {
  double B[9]; /* Dm^{-1}: F = Ds B, dN/dX rows (pbng_tet_rest_shape) */
  double V;    /* rest volume V_e^0 */
} pbng_tet_shape;

typedef struct {
  int32_t node[4]; /* local node indices */
  int32_t shape;   /* index into the shape table */
} pbng_tet_record;

/* Rest data of a sheet kind's element (issue 18): a tri3 membrane's local frame, area and corner
 * gradients, a bend4 stencil's cotangent weights, or a cloth6 stencil's (core/gpbd_strain.h: the triangle's
 * shape gradients, area, l^2, II0 and which edges have a neighbour: node 3 + i not repeating corner i). */
typedef union {
  pbng_membrane_rest membrane;
  pbng_bending_stencil bending;
  pbng_gpbd_cloth_rest cloth;
} pbng_sheet_rest;

typedef struct {
  int32_t nshapes, nelems;
  pbng_tet_shape *shapes;   /* [nshapes] (linear tetrahedra) */
  pbng_tet_record *records; /* [nelems], huge pages (linear tetrahedra) */
  pbng_element_reference *ref; /* other kinds: the reference data, of the one kind or, when kinds mix,
                                  [PBNG_ELEMENT_KIND_COUNT] by kind (those present set); NULL for linear tetrahedra */
  const uint8_t *kind;      /* kinds mix: each element's kind (the dmesh's); else NULL */
  int nen, nq;              /* nodes per element row and quadrature points per element (kinds mixed: the most) */
  int affine;               /* every element affine: jinv below, else qV and qgrad */
  double *qV;               /* [nelems][nq]: V_q (element e's own nq first) */
  double *qgrad;            /* [nelems][nq * nen * 3]: element e's [nq_e][nen_e][3] dN_a/dX at quadrature point q first */
  double *jinv;             /* affine: [nelems][10]: J^{-1} (row-major) and det J */
  pbng_sheet_rest *sheet;   /* [nelems] when the mesh has sheet kinds (their elements' rest data; the volume
                               elements' entries unused), else NULL */
} pbng_geometry;

/* Computes every element's rest shape from dm->X and deduplicates bitwise-identical ones (linear
 * tetrahedra); sheet kinds' rest data with the weft axis `weft` (needed only when the mesh has tri3
 * elements). Errors on a non-positive rest volume or a degenerate sheet element, naming the element's
 * global index. */
PetscErrorCode pbng_geometry_create(const pbng_dmesh *dm, const double weft[3], pbng_geometry *geo);
PetscErrorCode pbng_geometry_destroy(pbng_geometry *geo);

static inline const pbng_tet_shape *pbng_geometry_shape(const pbng_geometry *geo, int32_t e)
{
  return &geo->shapes[geo->records[e].shape];
}

/* sum_b x_b (x) grad_b over an element's nodes t (grad [nen][3]): F at a quadrature point from the
 * physical gradients, or dx/dr from the reference ones. */
static inline void pbng_qp_deformation_gradient(int nen, const int32_t *t, const double *grad, const double *x, double F[9])
{
  for (int k = 0; k < 9; ++k) F[k] = 0.0;
  for (int b = 0; b < nen; ++b) {
    const double *xb = &x[3 * t[b]], *gb = &grad[3 * b];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) F[3 * r + s] += xb[r] * gb[s];
  }
}

/* Other kinds: element e's reference data (its kind's when kinds mix). The accessors below take it. */
static inline const pbng_element_reference *pbng_geometry_ref(const pbng_geometry *geo, int32_t e)
{
  return geo->kind ? &geo->ref[geo->kind[e]] : geo->ref;
}
/* Element e's V_q and dN_a/dX blocks (non-affine). */
static inline const double *pbng_geometry_volumes(const pbng_geometry *geo, int32_t e) { return &geo->qV[(int64_t)geo->nq * e]; }
static inline const double *pbng_geometry_gradients(const pbng_geometry *geo, int32_t e)
{
  return &geo->qgrad[3 * (int64_t)geo->nen * geo->nq * e];
}

/* Quadrature point q of element e, ref = pbng_geometry_ref(geo, e): */
/* V_q = w_q |det J_q|. */
static inline double pbng_geometry_qp_volume(const pbng_geometry *geo, const pbng_element_reference *ref, int32_t e, int q)
{
  return geo->affine ? ref->w[q] * geo->jinv[10 * (int64_t)e + 9] : pbng_geometry_volumes(geo, e)[q];
}
/* dN_a/dX of every node ([nen_e][3]): the stored array, or (affine) computed into buf. */
static inline const double *pbng_geometry_qp_gradients(const pbng_geometry *geo, const pbng_element_reference *ref, int32_t e, int q,
                                                       double *buf)
{
  const int nen = ref->type->nodes;
  if (!geo->affine) return &pbng_geometry_gradients(geo, e)[3 * nen * q];
  const double *Ji = &geo->jinv[10 * (int64_t)e];
  for (int a = 0; a < nen; ++a) {
    const double *d = ref->dN[q][a];
    for (int i = 0; i < 3; ++i) buf[3 * a + i] = Ji[i] * d[0] + Ji[3 + i] * d[1] + Ji[6 + i] * d[2];
  }
  return buf;
}
/* dN_a/dX of local node a alone. */
static inline void pbng_geometry_qp_gradient(const pbng_geometry *geo, const pbng_element_reference *ref, int32_t e, int q, int a,
                                             double g[3])
{
  if (!geo->affine) {
    const double *s = &pbng_geometry_gradients(geo, e)[3 * (ref->type->nodes * q + a)];
    g[0] = s[0], g[1] = s[1], g[2] = s[2];
    return;
  }
  const double *Ji = &geo->jinv[10 * (int64_t)e], *d = ref->dN[q][a];
  for (int i = 0; i < 3; ++i) g[i] = Ji[i] * d[0] + Ji[3 + i] * d[1] + Ji[6 + i] * d[2];
}
/* F_q at positions x (t: the element's nodes). */
static inline void pbng_geometry_qp_F(const pbng_geometry *geo, const pbng_element_reference *ref, int32_t e, int q, const int32_t *t,
                                      const double *x, double F[9])
{
  const int nen = ref->type->nodes;
  if (!geo->affine) {
    pbng_qp_deformation_gradient(nen, t, &pbng_geometry_gradients(geo, e)[3 * nen * q], x, F);
    return;
  }
  double D[9]; /* dx/dr, then F = D J^{-1} */
  const double *Ji = &geo->jinv[10 * (int64_t)e];
  pbng_qp_deformation_gradient(nen, t, &ref->dN[q][0][0], x, D);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) F[3 * r + c] = D[3 * r] * Ji[c] + D[3 * r + 1] * Ji[3 + c] + D[3 * r + 2] * Ji[6 + c];
}

#endif
