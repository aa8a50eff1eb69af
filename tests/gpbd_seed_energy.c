#include "gpbd_seed_energy.h"
#include <math.h>
#include <string.h>
#include "core/element.h"
#include "core/mat3.h"
#include "core/material.h"
#include "core/stress_derivative.h"

/* ---- tetrahedron ---- */

const char *pbng_gpbd_tet_material_init(pbng_gpbd_tet_model model, double E, double nu, pbng_gpbd_tet_material *m)
{
  if (!(E > 0) || !isfinite(E)) return "gpbd: Young's modulus must be positive and finite";
  if (!(nu > -1 && nu < 0.5)) return "gpbd: Poisson's ratio must be in (-1, 0.5)";
  if (model != PBNG_GPBD_NEOHOOKEAN_LOG && model != PBNG_GPBD_STABLE_NEOHOOKEAN) return "gpbd: unknown tetrahedron model";
  m->model = model;
  pbng_lame_parameters(E, nu, &m->mu, &m->lambda);
  if (model == PBNG_GPBD_STABLE_NEOHOOKEAN) m->lambda += m->mu; /* Eq. 21 linearises to (mu, lambda - mu): remapped */
  return NULL;
}

/* e_ijk e_pqr F_kr = d cof(F)_ip / dF_jq (the second derivative of J = det F). */
static double cofactor_derivative(const double F[9], int i, int p, int j, int q)
{
  if (i == j || p == q) return 0.0;
  const int k = 3 - i - j, r = 3 - p - q;
  const double sij = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0, spq = ((q - p + 3) % 3 == 1) ? 1.0 : -1.0; /* e_ijk for distinct i, j, k */
  return sij * spq * F[3 * k + r];
}

double pbng_gpbd_tet_density(const pbng_gpbd_tet_material *m, const double F[9], double P[9], double dPdF[81])
{
  double C[9];
  mat3_cofactor(F, C);
  const double J = mat3_det_from_cofactor(F, C), mu = m->mu, lambda = m->lambda, I1 = mat3_frobenius_sq(F);
  if (m->model == PBNG_GPBD_NEOHOOKEAN_LOG) {
    if (!(J > 0)) return INFINITY; /* the barrier: undefined under inversion (Sec. 4.1) */
    const double lj = log(J), v = lambda * lj - mu;
    double A[9]; /* F^-T = cof F / J */
    for (int k = 0; k < 9; ++k) A[k] = C[k] / J;
    if (P)
      for (int k = 0; k < 9; ++k) P[k] = mu * F[k] + v * A[k];
    if (dPdF)
      for (int i = 0; i < 3; ++i)
        for (int p = 0; p < 3; ++p)
          for (int j = 0; j < 3; ++j)
            for (int q = 0; q < 3; ++q)
              dPdF[9 * (3 * i + p) + 3 * j + q] = mu * (i == j && p == q) + lambda * A[3 * i + p] * A[3 * j + q] - v * A[3 * i + q] * A[3 * j + p];
    return 0.5 * mu * (I1 - 3) - mu * lj + 0.5 * lambda * lj * lj; /* Eq. 20 */
  }
  const double v = lambda * (J - 1) - mu;
  if (P)
    for (int k = 0; k < 9; ++k) P[k] = mu * F[k] + v * C[k];
  if (dPdF)
    for (int i = 0; i < 3; ++i)
      for (int p = 0; p < 3; ++p)
        for (int j = 0; j < 3; ++j)
          for (int q = 0; q < 3; ++q)
            dPdF[9 * (3 * i + p) + 3 * j + q] = mu * (i == j && p == q) + lambda * C[3 * i + p] * C[3 * j + q] + v * cofactor_derivative(F, i, p, j, q);
  return 0.5 * mu * (I1 - 3) - mu * (J - 1) + 0.5 * lambda * (J - 1) * (J - 1); /* Eq. 21 */
}

double pbng_gpbd_tet_energy(const pbng_gpbd_tet_material *m, const pbng_gpbd_tet_rest *r, const double x[4][3], double grad[12], double hess[144])
{
  double F[9], P[9], D[81], g[4][3];
  pbng_gpbd_tet_deformation(r, x, F);
  const double psi = pbng_gpbd_tet_density(m, F, grad ? P : NULL, hess ? D : NULL);
  if (!isfinite(psi)) return psi;
  const double V = r->volume;
  for (int a = 0; a < 4; ++a) pbng_tet_shape_gradient(r->B, a, g[a]);
  if (grad)
    for (int a = 0; a < 4; ++a) {
      double Pg[3];
      mat3_vec(P, g[a], Pg);
      for (int i = 0; i < 3; ++i) grad[3 * a + i] = V * Pg[i];
    }
  if (hess) pbng_tet_stiffness(D, r->B, V, hess); /* V g_a^T dP/dF g_b per node pair (core/stress_derivative.h) */
  return V * psi;
}

double pbng_gpbd_tet_term_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const pbng_gpbd_tet_term *t = ctx;
  return pbng_gpbd_tet_energy(t->mat, t->rest, (const double(*)[3])y, grad, hess);
}

/* ---- cloth ---- */

const char *pbng_gpbd_cloth_material_init(double k_stretch, double k_shear, double stiffening, double k_bend, pbng_gpbd_cloth_material *m)
{
  if (!(k_stretch > 0) || !isfinite(k_stretch)) return "gpbd cloth: k_stretch must be positive and finite";
  if (!(k_shear > 0) || !isfinite(k_shear)) return "gpbd cloth: k_shear must be positive and finite";
  if (!(stiffening >= 0) || !isfinite(stiffening)) return "gpbd cloth: the stiffening factor must be non-negative and finite";
  if (!(k_bend >= 0) || !isfinite(k_bend)) return "gpbd cloth: k_bend must be non-negative and finite";
  m->k_stretch = k_stretch, m->k_shear = k_shear, m->stiffening = stiffening, m->k_bend = k_bend;
  return NULL;
}

/* k (t^2/2 + beta t^4/4) with its first and second derivatives. */
static double stiffening_term(double k, double beta, double t, double *d1, double *d2)
{
  *d1 = k * (t + beta * t * t * t);
  *d2 = k * (1 + 3 * beta * t * t);
  return k * (0.5 * t * t + 0.25 * beta * t * t * t * t);
}

double pbng_gpbd_cloth_energy_strain(const pbng_gpbd_cloth_material *m, double area, double l2, const double s[6], double dU[6], double d2U[36])
{
  double d1[6], d2[6], psi = 0;
  psi += stiffening_term(m->k_stretch, m->stiffening, s[0], &d1[0], &d2[0]); /* s_x */
  psi += stiffening_term(m->k_shear, m->stiffening, s[1], &d1[1], &d2[1]);   /* s_a */
  psi += stiffening_term(m->k_stretch, m->stiffening, s[2], &d1[2], &d2[2]); /* s_y */
  const double kb = m->k_bend / (l2 * l2), wb[3] = {1, 2, 1};                /* k_bend/2 |II - II0|_F^2, II - II0 = s_{3..5} / l^2 */
  for (int k = 0; k < 3; ++k) {
    psi += 0.5 * kb * wb[k] * s[3 + k] * s[3 + k];
    d1[3 + k] = kb * wb[k] * s[3 + k], d2[3 + k] = kb * wb[k];
  }
  if (dU)
    for (int k = 0; k < 6; ++k) dU[k] = area * d1[k];
  if (d2U) {
    memset(d2U, 0, sizeof(double) * 36);
    for (int k = 0; k < 6; ++k) d2U[7 * k] = area * d2[k];
  }
  return area * psi;
}

double pbng_gpbd_cloth_energy(const pbng_gpbd_cloth_material *m, const pbng_gpbd_cloth_rest *r, const double x[6][3], double grad[18], double hess[324])
{
  double s[6], S[6][18], dU[6], d2U[36];
  pbng_gpbd_cloth_strain(r, x, s, (grad || hess) ? S : NULL);
  const double U = pbng_gpbd_cloth_energy_strain(m, r->area, r->l2, s, dU, d2U);
  if (!isfinite(U)) return U;
  if (grad) /* Eq. 17: dU/dx = S^T dU^/ds */
    for (int v = 0; v < 18; ++v) {
      double g = 0;
      for (int k = 0; k < 6; ++k) g += S[k][v] * dU[k];
      grad[v] = g;
    }
  if (hess) {
    double SD[6][18]; /* d2U S (d2U diagonal) */
    for (int k = 0; k < 6; ++k)
      for (int v = 0; v < 18; ++v) SD[k][v] = d2U[7 * k] * S[k][v];
    for (int u = 0; u < 18; ++u)
      for (int v = 0; v < 18; ++v) {
        double h = 0;
        for (int k = 0; k < 6; ++k) h += S[k][u] * SD[k][v];
        hess[18 * u + v] = h;
      }
    pbng_gpbd_cloth_membrane_curvature(r, x, dU, (double(*)[18])hess); /* the membrane rows' curvature, exact */
  }
  return U;
}

double pbng_gpbd_cloth_term_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const pbng_gpbd_cloth_term *t = ctx;
  return pbng_gpbd_cloth_energy(t->mat, t->rest, (const double(*)[3])y, grad, hess);
}
