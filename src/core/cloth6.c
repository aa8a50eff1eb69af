#include "core/cloth6.h"
#include <math.h>
#include <string.h>
#include "core/dense.h"

const char *pbng_cloth6_material_from_membrane(const double C[3][3], double thickness, double stiffening, double k_bend, pbng_cloth6_material *m)
{
  if (!(thickness > 0) || !isfinite(thickness)) return "the thickness must be positive";
  if (!(C[0][0] > 0 && C[1][1] > 0 && C[2][2] > 0)) return "the membrane's moduli must be positive";
  if (!(stiffening >= 0) || !isfinite(stiffening)) return "the stiffening factor must be >= 0";
  if (!(k_bend >= 0) || !isfinite(k_bend)) return "the bending stiffness must be >= 0";
  m->k_weft = thickness * (C[0][0] - C[0][1] * C[0][1] / C[1][1]);
  m->k_warp = thickness * (C[1][1] - C[0][1] * C[0][1] / C[0][0]);
  m->k_shear = thickness * C[2][2];
  m->stiffening = stiffening, m->k_bend = k_bend;
  return NULL;
}

/* k (t^2/2 + beta t^4/4) with its first and second derivatives. */
static double stiffening_term(double k, double beta, double t, double *d1, double *d2)
{
  *d1 = k * (t + beta * t * t * t);
  *d2 = k * (1 + 3 * beta * t * t);
  return k * (0.5 * t * t + 0.25 * beta * t * t * t * t);
}

double pbng_cloth6_energy_strain(const pbng_cloth6_material *m, double area, double l2, const double s[6], double dU[6], double d2U[6])
{
  double d1[6], d2[6], psi = 0;
  psi += stiffening_term(m->k_weft, m->stiffening, s[0], &d1[0], &d2[0]);  /* s_x */
  psi += stiffening_term(m->k_shear, m->stiffening, s[1], &d1[1], &d2[1]); /* s_a */
  psi += stiffening_term(m->k_warp, m->stiffening, s[2], &d1[2], &d2[2]);  /* s_y */
  const double kb = m->k_bend / (l2 * l2), wb[3] = {1, 2, 1};              /* k_bend/2 |II - II0|_F^2, II - II0 = s_{3..5} / l^2 */
  for (int k = 0; k < 3; ++k) {
    psi += 0.5 * kb * wb[k] * s[3 + k] * s[3 + k];
    d1[3 + k] = kb * wb[k] * s[3 + k], d2[3 + k] = kb * wb[k];
  }
  for (int k = 0; k < 6; ++k) {
    if (dU) dU[k] = area * d1[k];
    if (d2U) d2U[k] = area * d2[k];
  }
  return area * psi;
}

double pbng_cloth6_energy(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], double grad[18], double hess[324])
{
  double s[6], S[6][18], dU[6], d2U[6];
  pbng_gpbd_cloth_strain(r, x, s, (grad || hess) ? S : NULL);
  const double U = pbng_cloth6_energy_strain(m, r->area, r->l2, s, dU, d2U);
  if (grad) /* Eq. 17: dU/dx = S^T dU^/ds */
    for (int v = 0; v < 18; ++v) {
      double g = 0;
      for (int k = 0; k < 6; ++k) g += S[k][v] * dU[k];
      grad[v] = g;
    }
  if (!hess) return U;
  for (int u = 0; u < 18; ++u) /* S^T d2U S */
    for (int v = 0; v < 18; ++v) {
      double h = 0;
      for (int k = 0; k < 6; ++k) h += S[k][u] * d2U[k] * S[k][v];
      hess[18 * u + v] = h;
    }
  pbng_gpbd_cloth_membrane_curvature(r, x, dU, (double(*)[18])hess);
  pbng_gpbd_cloth_bending_curvature(r, x, &dU[3], (double(*)[18])hess);
  return U;
}

/* Whether the symmetric 3 x 3 B is positive definite (its leading minors). */
static int positive_definite3(const double B[9])
{
  const double m2 = B[0] * B[4] - B[1] * B[3];
  const double m3 = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) + B[2] * (B[3] * B[7] - B[4] * B[6]);
  return B[0] > 0 && m2 > 0 && m3 > 0;
}

/* B <- the positive part of the symmetric 3 x 3 B (V max(w, 0) V^T; B itself when it is positive definite). */
static void positive_part3(double B[9])
{
  double A[9], w[3], V[9];
  if (positive_definite3(B)) return;
  memcpy(A, B, sizeof(A));
  dense_symmetric_eigen(3, A, w, V);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double v = 0;
      for (int c = 0; c < 3; ++c) v += V[3 * i + c] * fmax(w[c], 0.0) * V[3 * j + c];
      B[3 * i + j] = v;
    }
}

void pbng_cloth6_node_terms(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], int a, double grad[3], double H[9])
{
  double s[6], S[6][18], dU[6], d2U[6];
  pbng_gpbd_cloth_strain(r, x, s, S);
  (void)pbng_cloth6_energy_strain(m, r->area, r->l2, s, dU, d2U);
  for (int j = 0; j < 3; ++j) {
    double g = 0;
    for (int k = 0; k < 6; ++k) g += S[k][3 * a + j] * dU[k];
    grad[j] = g;
  }
  if (!H) return;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double h = 0;
      for (int k = 0; k < 6; ++k) h += d2U[k] * S[k][3 * a + i] * S[k][3 * a + j];
      H[3 * i + j] = h;
    }
  if (a >= 3) return;
  double B[9];
  pbng_gpbd_cloth_membrane_curvature_block(r, x, dU, a, B); /* sum_{k<3} dU_k d^2 s_k / dx_a^2 (symmetric) */
  positive_part3(B);
  for (int k = 0; k < 9; ++k) H[k] += B[k];
}
