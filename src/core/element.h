/* Element types: nodes per element, quadrature points with reference shape-function gradients and
 * weights. Every solver handles an element through this description; the linear tetrahedron is the
 * one-point case that the PBNG fast path specialises (constant dN/dX per element, Eq. 15). */
#ifndef PBNG_CORE_ELEMENT_H
#define PBNG_CORE_ELEMENT_H

typedef enum { PBNG_ELEMENT_TET4 = 0, PBNG_ELEMENT_KIND_COUNT } pbng_element_kind;

#define PBNG_MAX_ELEMENT_NODES 4 /* the most nodes of any element type */

typedef struct {
  pbng_element_kind kind;
  const char *name;          /* "tet4" */
  int nodes;                 /* nodes per element */
  int quad_points;           /* quadrature points */
  const double *weights;     /* [quad_points], summing to the reference element's measure */
  const double *dN_ref;      /* [quad_points][nodes][3] reference gradients */
  const char *xdmf_topology; /* XDMF TopologyType, e.g. "Tetrahedron" */
} pbng_element_type;

const pbng_element_type *pbng_element_type_get(pbng_element_kind kind);

/* Linear tetrahedron rest shape: Dm = [X1-X0 | X2-X0 | X3-X0] (columns). Writes B = Dm^{-1} (row-major),
 * so that F = Ds B and dN_j/dX = row j-1 of B for j = 1..3, dN_0/dX = -(sum of the rows).
 * Returns the signed rest volume det(Dm)/6. */
double pbng_tet_rest_shape(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                           double B[9]);

/* Signed volume of a tetrahedron (positive when X1-X0, X2-X0, X3-X0 is right-handed). */
double pbng_tet_signed_volume(const double X0[3], const double X1[3], const double X2[3], const double X3[3]);

/* dN_a/dX of node a (0..3) from B (see pbng_tet_rest_shape). */
static inline void pbng_tet_shape_gradient(const double B[9], int a, double g[3])
{
  if (a == 0) {
    for (int k = 0; k < 3; ++k) g[k] = -(B[k] + B[3 + k] + B[6 + k]);
  } else {
    for (int k = 0; k < 3; ++k) g[k] = B[3 * (a - 1) + k];
  }
}

/* F = Ds B with Ds = [x1-x0 | x2-x0 | x3-x0]. */
static inline void pbng_tet_deformation_gradient(const double *x0, const double *x1, const double *x2,
                                                 const double *x3, const double B[9], double F[9])
{
  for (int r = 0; r < 3; ++r) {
    const double d1 = x1[r] - x0[r], d2 = x2[r] - x0[r], d3 = x3[r] - x0[r];
    F[3 * r + 0] = d1 * B[0] + d2 * B[3] + d3 * B[6];
    F[3 * r + 1] = d1 * B[1] + d2 * B[4] + d3 * B[7];
    F[3 * r + 2] = d1 * B[2] + d2 * B[5] + d3 * B[8];
  }
}

#endif
