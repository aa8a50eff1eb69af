/* The GPBD seed's own energies (issue 19; seed generalized-position-based-dynamics.txt Sec. 4), kept for the
 * tests of the local solve (tests/test_gpbd_kernels.c): runs give GPBD pbng's materials instead
 * (src/methods/gpbd/gpbd_terms.c). Energies of GPBD's force terms as
 * functions of the term's node positions x, with dU/dx and d^2U/dx^2, and the adapters that give them to
 * the local solve (core/gpbd_local.h) through one callback type.
 *  - tetrahedron, Lame parameters mu, lambda from E, nu (core/material.h pbng_lame_parameters, Eq. 9 of
 *    the PBNG paper), J = det F, rest volume V:
 *      log-barrier neo-Hookean (Eq. 20):  U = V (mu/2 (|F|^2 - 3) - mu log J + lambda/2 log^2 J), +inf for J <= 0;
 *      stable neo-Hookean (Eq. 21 as printed, |F_j| read as J): U = V (mu/2 (|F|^2 - 3) - mu (J - 1) + lh/2 (J - 1)^2)
 *      with lh = lambda + mu in place of the printed lambda: Eq. 21 linearises at F = I to the moduli
 *      (mu, lh - mu), so the printed lambda would make the material softer in volume than its E, nu say.
 *      U = V (mu/2 (|F|^2 - 3) + lh/2 (J - alpha)^2) + const, alpha = 1 + mu/lh: Smith et al. 2018's form
 *      without its log(I_C + 1) term; it is pbng's `neohookean` material (core/material.h, Eq. 8 with
 *      Sec. 8's lambda_hat) up to a constant, NOT pbng's `stable_neohookean` (which has the log term and
 *      mu' = 4mu/3, lambda' = lambda + 5mu/6).
 *    Both have P(I) = 0 and linearised moduli mu, lambda. Hessians exact (not projected).
 *  - cloth (the seed uses HYLC's tabulated yarn-level energy; not available, so a stated analytic one
 *    behind the same strain interface, core/gpbd_strain.h), per rest area A:
 *      U^(s) = A [ k_stretch sum_{c = x, y} (s_c^2 / 2 + beta s_c^4 / 4) + k_shear (s_a^2 / 2 + beta s_a^4 / 4)
 *                  + k_bend / 2 |II - II0|_F^2 ],   |II - II0|_F^2 = (s_3^2 + 2 s_4^2 + s_5^2) / l^4,
 *    s the cloth strain (s_x, s_a, s_y, l^2 (II - II0)_{xx, xy, yy}); beta >= 0 the stiffening factor (tangent
 *    stiffness k (1 + 3 beta s^2): strain-stiffening, convex in s; beta = 0 the linear model); moduli per
 *    unit area (N/m; k_bend in N m).
 *    dU/dx = S^T dU^/ds (Eq. 17) exactly; d^2U/dx^2 = S^T d^2U^/ds^2 S + sum_{k<3} dU^/ds_k d^2 s_k/dx^2: the
 *    membrane rows exact, the bending rows Gauss-Newton (their own second derivatives dropped,
 *    docs/gpbd.md).
 * Pure functions, no allocation. */
#ifndef PBNG_TESTS_GPBD_SEED_ENERGY_H
#define PBNG_TESTS_GPBD_SEED_ENERGY_H

#include "core/gpbd_local.h"
#include "core/gpbd_strain.h"


/* ---- tetrahedron ---- */

typedef enum {
  PBNG_GPBD_NEOHOOKEAN_LOG = 0,    /* Eq. 20 */
  PBNG_GPBD_STABLE_NEOHOOKEAN = 1, /* Eq. 21 */
} pbng_gpbd_tet_model;

typedef struct {
  pbng_gpbd_tet_model model;
  double mu, lambda; /* the model's coefficients: Lame's mu, and lambda (Eq. 20) or lambda + mu (Eq. 21) */
} pbng_gpbd_tet_material;

/* The coefficients from E > 0, nu in (-1, 0.5) (Lame by Eq. 9 of the PBNG paper, remapped for Eq. 21 as
 * above). Returns NULL, or a message naming the bad parameter. */
const char *pbng_gpbd_tet_material_init(pbng_gpbd_tet_model model, double E, double nu, pbng_gpbd_tet_material *m);

/* Psi(F) and, when given, P = dPsi/dF (row-major 3 x 3) and dP/dF (dPdF[9 (3i + p) + 3j + q] =
 * d P_ip / d F_jq):
 *   Eq. 20: P = mu F + (lambda log J - mu) F^-T,
 *           dP_ip/dF_jq = mu d_ij d_pq + lambda A_ip A_jq - (lambda log J - mu) A_iq A_jp,  A = F^-T;
 *   Eq. 21: P = mu F + (lambda (J - 1) - mu) cof F  (lambda the material's coefficient, = Lame's + mu),
 *           dP_ip/dF_jq = mu d_ij d_pq + lambda cof_ip cof_jq + (lambda (J - 1) - mu) e_ijk e_pqr F_kr.
 * Eq. 20 returns +INFINITY for J <= 0 (P, dPdF not written). */
double pbng_gpbd_tet_density(const pbng_gpbd_tet_material *m, const double F[9], double P[9], double dPdF[81]);

/* U = V Psi(F(x)); grad[3a + i] = V (P g_a)_i; hess[12 (3a + i) + 3b + j] = V sum_pq dP_ip/dF_jq g_ap g_bq. */
double pbng_gpbd_tet_energy(const pbng_gpbd_tet_material *m, const pbng_gpbd_tet_rest *r, const double x[4][3], double grad[12], double hess[144]);

/* Callback context of a tetrahedron term (ctx of pbng_gpbd_tet_term_energy). */
typedef struct {
  const pbng_gpbd_tet_material *mat;
  const pbng_gpbd_tet_rest *rest;
} pbng_gpbd_tet_term;

/* pbng_gpbd_energy_fn of a tetrahedron: ctx a pbng_gpbd_tet_term, y 12 values. */
double pbng_gpbd_tet_term_energy(const void *ctx, const double *y, double *grad, double *hess);

/* ---- cloth ---- */

typedef struct {
  double k_stretch, k_shear, stiffening, k_bend;
} pbng_gpbd_cloth_material;

/* Returns NULL, or a message: k_stretch, k_shear positive and finite, stiffening and k_bend >= 0 and finite. */
const char *pbng_gpbd_cloth_material_init(double k_stretch, double k_shear, double stiffening, double k_bend, pbng_gpbd_cloth_material *m);

/* U^(s) of a triangle of rest area `area` and l^2 = l2 (module comment), with dU^/ds (6) and d^2U^/ds^2
 * (6 x 6, diagonal) when given. */
double pbng_gpbd_cloth_energy_strain(const pbng_gpbd_cloth_material *m, double area, double l2, const double s[6], double dU[6], double d2U[36]);

/* U(x) = U^(s(x)) of the stencil x[6][3], with dU/dx = S^T dU^/ds (18) and the Hessian of the module
 * comment (18 x 18) when given. */
double pbng_gpbd_cloth_energy(const pbng_gpbd_cloth_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], double grad[18], double hess[324]);

typedef struct {
  const pbng_gpbd_cloth_material *mat;
  const pbng_gpbd_cloth_rest *rest;
} pbng_gpbd_cloth_term;

/* pbng_gpbd_energy_fn of a cloth stencil: ctx a pbng_gpbd_cloth_term, y 18 values. */
double pbng_gpbd_cloth_term_energy(const void *ctx, const double *y, double *grad, double *hess);

#endif
