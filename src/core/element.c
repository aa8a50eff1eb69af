#include "core/element.h"
#include "core/mat3.h"

/* Reference tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1): one quadrature point, weight 1/6. */
static const double tet4_weights[1] = {1.0 / 6.0};
static const double tet4_dN_ref[12] = {-1, -1, -1, 1, 0, 0, 0, 1, 0, 0, 0, 1};

static const pbng_element_type element_types[PBNG_ELEMENT_KIND_COUNT] = {
  {PBNG_ELEMENT_TET4, "tet4", 4, 1, tet4_weights, tet4_dN_ref, "Tetrahedron"},
};

const pbng_element_type *pbng_element_type_get(pbng_element_kind kind)
{
  if (kind < 0 || kind >= PBNG_ELEMENT_KIND_COUNT) return 0;
  return &element_types[kind];
}

static void tet_edge_matrix(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                            double D[9])
{
  for (int r = 0; r < 3; ++r) {
    D[3 * r + 0] = X1[r] - X0[r];
    D[3 * r + 1] = X2[r] - X0[r];
    D[3 * r + 2] = X3[r] - X0[r];
  }
}

double pbng_tet_signed_volume(const double X0[3], const double X1[3], const double X2[3], const double X3[3])
{
  double D[9];
  tet_edge_matrix(X0, X1, X2, X3, D);
  return mat3_det(D) / 6.0;
}

double pbng_tet_rest_shape(const double X0[3], const double X1[3], const double X2[3], const double X3[3],
                           double B[9])
{
  double D[9];
  tet_edge_matrix(X0, X1, X2, X3, D);
  return mat3_inverse(D, B) / 6.0;
}
