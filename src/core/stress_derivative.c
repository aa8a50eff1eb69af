/* dP/dF, the exact Hessian of the energy density (Eq. 45 in full, not the approximation of Eq. 36),
 * for the Newton baseline. Stored as a 9x9 matrix: D[9 (3i + j) + 3k + l] = dP_ij / dF_kl. */
#include "core/stress_derivative.h"
#include <stddef.h>
#include <string.h>
#include "core/dense.h"
#include "core/mat3.h"

static int levi_civita(int a, int b, int c) { return ((a - b) * (b - c) * (c - a)) / 2; }

/* D += s * d cof(F) / dF: d cof_ij / dF_kl = eps_ikn eps_jlq F_nq (cof = 1/2 eps eps F F), nonzero only for
 * i != k and j != l, where n and q are the third indices. */
static void add_cofactor_derivative(const double F[9], double s, double D[81])
{
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      if (i == k) continue;
      const int n = 3 - i - k;
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 3; ++l) {
          if (j == l) continue;
          const int q = 3 - j - l;
          D[9 * (3 * i + j) + 3 * k + l] += s * (levi_civita(i, k, n) * levi_civita(j, l, q) * F[3 * n + q]);
        }
    }
}

/* D += s a (x) b for 3x3 matrices a, b. */
static void add_outer(const double a[9], const double b[9], double s, double D[81])
{
  for (int p = 0; p < 9; ++p)
    for (int q = 0; q < 9; ++q) D[9 * p + q] += s * a[p] * b[q];
}

static void add_identity(double s, double D[81])
{
  for (int p = 0; p < 9; ++p) D[10 * p] += s;
}

/* D += s dR/dF for F = R S (R proper rotation, S symmetric): dR = R [w]x with
 * (tr(S) I - S) w = m, [m]x = M - M^T, M = R^T dF. Undefined where tr(S) I - S is singular. */
static void add_rotation_derivative(const double F[9], const double R[9], double s, double D[81])
{
  double S[9], A[9], Ainv[9];
  mat3_tmul(R, F, S);
  const double tr = S[0] + S[4] + S[8];
  for (int p = 0; p < 9; ++p) A[p] = -0.5 * (S[p] + S[3 * (p % 3) + p / 3]);
  A[0] += tr, A[4] += tr, A[8] += tr;
  mat3_inverse(A, Ainv);
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) {
      /* M = R^T E_kl: M_ab = R_ka delta_bl; m = axial(M - M^T) */
      double M[9] = {0}, m[3], w[3];
      for (int a = 0; a < 3; ++a) M[3 * a + l] = R[3 * k + a];
      m[0] = M[7] - M[5], m[1] = M[2] - M[6], m[2] = M[3] - M[1];
      mat3_vec(Ainv, m, w);
      const double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
      double dR[9];
      mat3_mul(R, W, dR);
      for (int p = 0; p < 9; ++p) D[9 * p + 3 * k + l] += s * dR[p];
    }
}

/* StVK, P = F S (seed Eq. 7): dP_ij/dF_kl = delta_ik S_lj + mu (F_il F_kj + (F F^T)_ik delta_jl) + lambda F_ij F_kl. */
static void stvk_stress_derivative(const pbng_material *m, const double F[9], const double ep[6], double D[81])
{
  double S[9], FFt[9];
  pbng_stvk_second_piola(m, F, S);
  if (ep) pbng_stvk_subtract_plastic(m, ep, S);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) FFt[3 * i + k] = F[3 * i] * F[3 * k] + F[3 * i + 1] * F[3 * k + 1] + F[3 * i + 2] * F[3 * k + 2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l)
          D[9 * (3 * i + j) + 3 * k + l] = (i == k ? S[3 * l + j] : 0.0) + m->k_shear * (F[3 * i + l] * F[3 * k + j] + (j == l ? FFt[3 * i + k] : 0.0)) +
                                           m->k_volume * F[3 * i + j] * F[3 * k + l];
}

void pbng_stress_derivative(const pbng_material *m, const double F[9], double D[81])
{
  if (m->kind == PBNG_MATERIAL_STVK) {
    stvk_stress_derivative(m, F, NULL, D);
    return;
  }
  double cof[9];
  mat3_cofactor(F, cof);
  const double J = mat3_det_from_cofactor(F, cof);
  double v = m->k_volume * (J - 1.0 - m->j_rest), dv = m->k_volume; /* P = s F + v cof (- s R), dv = dv/dJ */
  if (m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) pbng_log_volume(m, J, &v, &dv); /* (lambda log J - mu) / J, (lambda + mu - lambda log J) / J^2 */
  for (int p = 0; p < 81; ++p) D[p] = 0.0;
  add_outer(cof, cof, dv, D);
  add_cofactor_derivative(F, v, D);
  if (m->kind == PBNG_MATERIAL_COROTATED) { /* P = 2 mu (F - R) + lambda (J - 1) cof */
    double R[9];
    pbng_polar_rotation(F, R, NULL);
    add_identity(2.0 * m->k_shear, D);
    add_rotation_derivative(F, R, -2.0 * m->k_shear, D);
  } else if (m->kind == PBNG_MATERIAL_NEOHOOKEAN || m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* P = mu F + ... */
    add_identity(m->k_shear, D);
  } else if (m->kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN) { /* P = mu' (1 - 1/(I + 1)) F + ..., I = |F|^2 */
    const double I = mat3_frobenius_sq(F);
    add_identity(m->k_shear * I / (I + 1.0), D);
    add_outer(F, F, 2.0 * m->k_shear / ((I + 1.0) * (I + 1.0)), D);
  } else {
    pbng_material_kind_invalid(m->kind);
  }
}

void pbng_tet_stiffness(const double D[81], const double B[9], double V, double K[144])
{
  double g[4][3];
  for (int a = 0; a < 4; ++a) pbng_tet_shape_gradient(B, a, g[a]);
  /* K_(a i),(b k) = V sum_jl D_ij,kl g_a,j g_b,l */
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i)
      for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 3; ++k) {
          double v = 0.0;
          for (int j = 0; j < 3; ++j)
            for (int l = 0; l < 3; ++l) v += D[9 * (3 * i + j) + 3 * k + l] * g[a][j] * g[b][l];
          K[12 * (3 * a + i) + 3 * b + k] = V * v;
        }
}

void pbng_stress_derivative_plastic(const pbng_material *m, const double F[9], const double ep[6], double D[81])
{
  if (ep && m->kind == PBNG_MATERIAL_STVK) stvk_stress_derivative(m, F, ep, D);
  else pbng_stress_derivative(m, F, D);
}

void pbng_tet_node_block(const double D[81], const double g[3], double V, double H[9])
{
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t < 3; ++t) {
      double h = 0.0;
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 3; ++l) h += D[9 * (3 * r + j) + 3 * t + l] * g[j] * g[l];
      H[3 * r + t] = V * h;
    }
}

void pbng_clamp_psd3(double H[9])
{
  if (H[0] > 0 && H[0] * H[4] - H[1] * H[3] > 0 && mat3_det(H) > 0) return;
  double A[9], w[3], Q[9];
  memcpy(A, H, sizeof(A));
  dense_symmetric_eigen(3, A, w, Q);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double h = 0.0;
      for (int k = 0; k < 3; ++k) h += Q[3 * r + k] * fmax(w[k], 0.0) * Q[3 * c + k];
      H[3 * r + c] = h;
    }
}
