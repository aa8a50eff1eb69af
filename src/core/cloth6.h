/* The six-dimensional cloth stencil as an energy for every solver (issue 43 item 4; seed
 * generalized-position-based-dynamics.txt Sec. 4.2, its sheets of Sec. 5): a triangle x0 x1 x2 with the
 * vertex x_{3+i} across each edge i (core/gpbd_strain.h), its strain s = (s_x, s_a, s_y, l^2 (II - II0))
 * (Eq. 22 and the l^2-scaled second fundamental form) and a strain-stiffening energy of s alone (the seed
 * evaluates HYLC's tabulated yarn energy there, which is not available; this analytic one is stated in
 * docs/cloth.md#the-six-dimensional-cloth-stencil):
 *
 *   U(x) = A [ k_weft (s_x^2/2 + beta s_x^4/4) + k_warp (s_y^2/2 + beta s_y^4/4) + k_shear (s_a^2/2 + beta s_a^4/4)
 *              + k_bend/2 |II - II0|_F^2 ],     |II - II0|_F^2 = (s_3^2 + 2 s_4^2 + s_5^2) / l^4,
 *
 * A the rest area, k_* per unit area (N/m; k_bend in N m), beta >= 0 the stiffening factor (the tangent
 * stiffness k (1 + 3 beta s^2) grows with the strain; beta = 0 the linear model). d^2U/ds^2 is diagonal and
 * positive, so every non-convexity comes from the strain's own curvature.
 * Derivatives: dU/dx = S^T dU/ds (seed Eq. 17); d^2U/dx^2 = S^T d2U S + sum_k dU/ds_k d^2 s_k/dx^2, exact
 * (the membrane rows' and the II rows' curvature, core/gpbd_strain.h). PBNG's node block: the Gauss-Newton
 * block plus the positive part of the membrane rows' own block (cloth6_node_block). Pure functions, no
 * allocation. */
#ifndef PBNG_CORE_CLOTH6_H
#define PBNG_CORE_CLOTH6_H

#include "core/gpbd_strain.h"

enum { PBNG_CLOTH6_NODES = 6, PBNG_CLOTH6_DOF = 18 };

typedef struct {
  double k_weft, k_warp, k_shear; /* N/m: the stretch moduli along weft (local x) and warp (y), the shear modulus */
  double stiffening;              /* beta >= 0 */
  double k_bend;                  /* N m */
} pbng_cloth6_material;

/* The moduli of a plane-stress membrane C (Voigt on (E_xx, E_yy, 2 E_xy)) of thickness h: the uniaxial
 * stiffnesses k_weft = h (C00 - C01^2 / C11), k_warp = h (C11 - C01^2 / C00) and k_shear = h C22, so that the
 * energy linearises to the membrane's for uniaxial stretch and pure shear (s_a ~ 2 E_xy); the Poisson
 * coupling is dropped (the seed's strain rows are separate measures). Returns NULL, or a message. */
const char *pbng_cloth6_material_from_membrane(const double C[3][3], double thickness, double stiffening, double k_bend, pbng_cloth6_material *m);

/* U^(s) of a stencil with rest area `area` and l^2 = l2, with dU^/ds (6) and the diagonal of d^2U^/ds^2 (6)
 * when given. */
double pbng_cloth6_energy_strain(const pbng_cloth6_material *m, double area, double l2, const double s[6], double dU[6], double d2U[6]);

/* U(x) of the stencil x[6][3]; grad (18) and hess (18 x 18 row-major, exact, possibly indefinite) when given. */
double pbng_cloth6_energy(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], double grad[18], double hess[324]);

/* Node a's (0..5) gradient dU/dx_a and, when H is given, PBNG's SPD-able block: sum_k d2U_k S_ka S_ka^T (the
 * Gauss-Newton block, PSD) plus, for a corner of the triangle, the positive part of the membrane rows'
 * curvature block sum_k dU_k d^2 s_k / dx_a^2 (the analogue of the membrane's positive stress part). */
void pbng_cloth6_node_terms(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], int a, double grad[3], double H[9]);

#endif
