#include "core/gpbd_tet4_material.h"
#include <math.h>

#define LANES PBNG_GPBD_LANES

int pbng_gpbd_tet4_lane_hessians_supported(pbng_material_kind kind)
{
  return kind == PBNG_MATERIAL_NEOHOOKEAN || kind == PBNG_MATERIAL_NEOHOOKEAN_LOG || kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN ||
         kind == PBNG_MATERIAL_STVK;
}

/* X : Y_r on every lane, for the six r: out[r][l] = sum_p X[p][l] Y[p][r][l]. */
static void contract_directions(const double X[9][LANES], const double Y[9][6][LANES], double out[6][LANES])
{
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
#pragma omp simd
    for (int l = 0; l < LANES; ++l) out[r][l] = 0.0;
#pragma GCC unroll 9
    for (int p = 0; p < 9; ++p)
#pragma omp simd
      for (int l = 0; l < LANES; ++l) out[r][l] = fma(X[p][l], Y[p][r][l], out[r][l]);
  }
}

/* cof F (material.h's convention, cof F = J F^-T: entry (i, j) from rows i + 1, i + 2 and columns j + 1, j + 2, mod 3)
 * and J = det F on every lane (mat3_det_from_cofactor's sum, the first row). */
static void cofactor_lanes(const double F[9][LANES], double cof[9][LANES], double J[LANES])
{
#pragma GCC unroll 9
  for (int p = 0; p < 9; ++p) {
    const int i1 = (p / 3 + 1) % 3, i2 = (p / 3 + 2) % 3, j1 = (p % 3 + 1) % 3, j2 = (p % 3 + 2) % 3;
#pragma omp simd
    for (int l = 0; l < LANES; ++l) cof[p][l] = F[3 * i1 + j1][l] * F[3 * i2 + j2][l] - F[3 * i1 + j2][l] * F[3 * i2 + j1][l];
  }
#pragma omp simd
  for (int l = 0; l < LANES; ++l) J[l] = F[0][l] * cof[0][l] + F[1][l] * cof[1][l] + F[2][l] * cof[2][l];
}

/* dcof[dF_s] (cof's derivative at F in the direction dF_s, for the six s) on every lane:
 * dcof[B]_ij = B_i1j1 F_i2j2 + F_i1j1 B_i2j2 - B_i1j2 F_i2j1 - F_i1j2 B_i2j1. */
static void cofactor_directions(const double F[9][LANES], const double dF[9][6][LANES], double M[9][6][LANES])
{
#pragma GCC unroll 9
  for (int p = 0; p < 9; ++p) {
    const int i1 = (p / 3 + 1) % 3, i2 = (p / 3 + 2) % 3, j1 = (p % 3 + 1) % 3, j2 = (p % 3 + 2) % 3;
    const int a = 3 * i1 + j1, b = 3 * i2 + j2, c = 3 * i1 + j2, d = 3 * i2 + j1;
#pragma GCC unroll 6
    for (int s = 0; s < 6; ++s)
#pragma omp simd
      for (int l = 0; l < LANES; ++l)
        M[p][s][l] = dF[a][s][l] * F[b][l] + F[a][l] * dF[b][s][l] - dF[c][s][l] * F[d][l] - F[c][l] * dF[d][s][l];
  }
}

/* The split materials' scalars on every lane (material.h pbng_stress_scalars, stress_derivative.c): P = sh F + v cof,
 * dP[B] = sh B + c (F : B) F + dv (cof : B) cof + v dcof[B]. */
static void split_scalars(const pbng_material *m, const double F[9][LANES], const double J[LANES], double sh[LANES], double c[LANES], double v[LANES],
                          double dv[LANES])
{
  if (m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* the log needs libm per lane */
    for (int l = 0; l < LANES; ++l) {
      pbng_log_volume(m, J[l], &v[l], &dv[l]);
      sh[l] = m->k_shear, c[l] = 0.0;
    }
    return;
  }
  const int stable = m->kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN;
#pragma omp simd
  for (int l = 0; l < LANES; ++l) {
    v[l] = m->k_volume * (J[l] - 1.0 - m->j_rest), dv[l] = m->k_volume;
    sh[l] = m->k_shear, c[l] = 0.0;
    if (stable) { /* sh = mu' I / (I + 1), I = |F|^2: c = 2 mu' / (I + 1)^2 */
      double I = 0.0;
      for (int p = 0; p < 9; ++p) I += F[p][l] * F[p][l];
      sh[l] = m->k_shear * I / (I + 1.0), c[l] = 2.0 * m->k_shear / ((I + 1.0) * (I + 1.0));
    }
  }
}

/* mat3_det (its cofactor expansion along the first row, with its parentheses) and mat3_frobenius_sq (from 0, in
 * entry order) on every lane. */
static void det_and_norm_lanes(const double F[9][LANES], double J[LANES], double n2[LANES])
{
#pragma omp simd
  for (int l = 0; l < LANES; ++l) {
    J[l] = F[0][l] * (F[4][l] * F[8][l] - F[5][l] * F[7][l]) - F[1][l] * (F[3][l] * F[8][l] - F[5][l] * F[6][l]) +
           F[2][l] * (F[3][l] * F[7][l] - F[4][l] * F[6][l]);
    double s = 0.0;
    for (int p = 0; p < 9; ++p) s += F[p][l] * F[p][l];
    n2[l] = s;
  }
}

/* seed Eq. 3 as material.c's stvk_energy_density: 2E = F^T F - I (mat3_tmul's sums), mu/4 |2E|^2 + lambda/2 tr(E)^2. */
static void stvk_energy_lanes(const pbng_material *m, const double F[9][LANES], double U[LANES])
{
#pragma omp simd
  for (int l = 0; l < LANES; ++l) {
    double C[9], s = 0.0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) C[3 * r + c] = F[r][l] * F[c][l] + F[3 + r][l] * F[3 + c][l] + F[6 + r][l] * F[6 + c][l];
    C[0] -= 1.0, C[4] -= 1.0, C[8] -= 1.0;
    const double trE = 0.5 * (C[0] + C[4] + C[8]);
    for (int p = 0; p < 9; ++p) s += C[p] * C[p];
    U[l] = 0.25 * m->k_shear * s + 0.5 * m->k_volume * trE * trE;
  }
}

int pbng_gpbd_tet4_lane_energy(const pbng_material *m, const double F[9][LANES], const int *want, double U[LANES])
{
  double J[LANES], n2[LANES], L[LANES];
  if (m->kind == PBNG_MATERIAL_STVK) {
    stvk_energy_lanes(m, F, U);
    return 1;
  }
  if (!pbng_gpbd_tet4_lane_hessians_supported(m->kind)) return 0;
  det_and_norm_lanes(F, J, n2);
  if (m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* seed Eq. 20; +INFINITY for J <= 0 */
    for (int l = 0; l < LANES; ++l) L[l] = (!want || want[l]) && !(J[l] <= 0.0) ? log(J[l]) : 0.0;
#pragma omp simd
    for (int l = 0; l < LANES; ++l)
      U[l] = J[l] <= 0.0 ? INFINITY : 0.5 * m->k_shear * (n2[l] - 3.0) - m->k_shear * L[l] + 0.5 * m->k_volume * L[l] * L[l];
    return 1;
  }
  if (m->kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN) { /* Eq. 10, with log(|F|^2 + 1) */
    for (int l = 0; l < LANES; ++l) L[l] = !want || want[l] ? log(n2[l] + 1.0) : 0.0;
#pragma omp simd
    for (int l = 0; l < LANES; ++l) {
      const double v = J[l] - 1.0 - m->j_rest, volume = 0.5 * m->k_volume * v * v;
      U[l] = 0.5 * m->k_shear * (n2[l] - 3.0 - L[l]) + volume;
    }
    return 1;
  }
#pragma omp simd
  for (int l = 0; l < LANES; ++l) { /* Eq. 8 */
    const double v = J[l] - 1.0 - m->j_rest, volume = 0.5 * m->k_volume * v * v;
    U[l] = 0.5 * m->k_shear * n2[l] + volume;
  }
  return 1;
}

void pbng_gpbd_tet4_direction_gram(const double dF[6][9], double gram[6][6])
{
  for (int r = 0; r < 6; ++r)
    for (int s = 0; s <= r; ++s) {
      double g = 0.0;
      for (int p = 0; p < 9; ++p) g = fma(dF[r][p], dF[s][p], g);
      gram[r][s] = gram[s][r] = g;
    }
}

static void split_hessians(const pbng_material *m, const double F[9][LANES], const double dF[9][6][LANES], const double gram[6][6][LANES],
                           double K[6][6][LANES])
{
  double cof[9][LANES], J[LANES], sh[LANES], c[LANES], v[LANES], dv[LANES], a[6][LANES], b[6][LANES], M[9][6][LANES];
  cofactor_lanes(F, cof, J);
  split_scalars(m, F, J, sh, c, v, dv);
  contract_directions(F, dF, a);   /* F : dF_r */
  contract_directions(cof, dF, b); /* cof : dF_r = dJ[dF_r] */
  cofactor_directions(F, dF, M);
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r)
    for (int s = 0; s <= r; ++s) {
      double h[LANES];
#pragma omp simd
      for (int l = 0; l < LANES; ++l) h[l] = 0.0;
#pragma GCC unroll 9
      for (int p = 0; p < 9; ++p)
#pragma omp simd
        for (int l = 0; l < LANES; ++l) h[l] = fma(dF[p][r][l], M[p][s][l], h[l]);
#pragma omp simd
      for (int l = 0; l < LANES; ++l)
        K[r][s][l] = K[s][r][l] = sh[l] * gram[r][s][l] + c[l] * a[r][l] * a[s][l] + dv[l] * b[r][l] * b[s][l] + v[l] * h[l];
    }
}

/* StVK (P = F S, S = 2 mu E + lambda tr(E) I, E = (F^T F - I) / 2; material.h pbng_stvk_second_piola). */
static void stvk_hessians(const pbng_material *m, const double F[9][LANES], const double dF[9][6][LANES], double K[6][6][LANES])
{
  double S[9][LANES], E[9][6][LANES], a[6][LANES], DS[9][6][LANES];
  const double mu = m->k_shear, lambda = m->k_volume;
#pragma omp simd
  for (int l = 0; l < LANES; ++l) {
    double C[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) C[3 * i + j] = F[i][l] * F[j][l] + F[3 + i][l] * F[3 + j][l] + F[6 + i][l] * F[6 + j][l];
    const double trE = 0.5 * (C[0] + C[4] + C[8] - 3.0);
    for (int p = 0; p < 9; ++p) S[p][l] = mu * (C[p] - (p % 4 == 0)) + (p % 4 == 0 ? lambda * trE : 0.0);
  }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r)
#pragma omp simd
    for (int l = 0; l < LANES; ++l) {
      double A[9]; /* F^T dF_r; E_r = sym(A); DS_r = dF_r S */
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          A[3 * i + j] = F[i][l] * dF[j][r][l] + F[3 + i][l] * dF[3 + j][r][l] + F[6 + i][l] * dF[6 + j][r][l];
          DS[3 * i + j][r][l] = dF[3 * i][r][l] * S[j][l] + dF[3 * i + 1][r][l] * S[3 + j][l] + dF[3 * i + 2][r][l] * S[6 + j][l];
        }
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) E[3 * i + j][r][l] = 0.5 * (A[3 * i + j] + A[3 * j + i]);
      a[r][l] = A[0] + A[4] + A[8]; /* F : dF_r */
    }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r)
    for (int s = 0; s <= r; ++s) {
      double g[LANES], h[LANES];
#pragma omp simd
      for (int l = 0; l < LANES; ++l) g[l] = h[l] = 0.0;
#pragma GCC unroll 9
      for (int p = 0; p < 9; ++p)
#pragma omp simd
        for (int l = 0; l < LANES; ++l) g[l] = fma(DS[p][r][l], dF[p][s][l], g[l]), h[l] = fma(E[p][r][l], E[p][s][l], h[l]);
#pragma omp simd
      for (int l = 0; l < LANES; ++l) K[r][s][l] = K[s][r][l] = g[l] + 2.0 * mu * h[l] + lambda * a[r][l] * a[s][l];
    }
}

/* P = F S for StVK on every lane (S: stvk_hessians' second Piola-Kirchhoff stress). */
static void stvk_stress(const pbng_material *m, const double F[9][LANES], double P[9][LANES])
{
  const double mu = m->k_shear, lambda = m->k_volume;
#pragma omp simd
  for (int l = 0; l < LANES; ++l) {
    double C[9], S[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) C[3 * i + j] = F[i][l] * F[j][l] + F[3 + i][l] * F[3 + j][l] + F[6 + i][l] * F[6 + j][l];
    const double trE = 0.5 * (C[0] + C[4] + C[8] - 3.0);
    for (int p = 0; p < 9; ++p) S[p] = mu * (C[p] - (p % 4 == 0)) + (p % 4 == 0 ? lambda * trE : 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) P[3 * i + j][l] = F[3 * i][l] * S[j] + F[3 * i + 1][l] * S[3 + j] + F[3 * i + 2][l] * S[6 + j];
  }
}

void pbng_gpbd_tet4_lane_stress(const pbng_material *m, const double F[9][LANES], double P[9][LANES])
{
  if (m->kind == PBNG_MATERIAL_STVK) {
    stvk_stress(m, F, P);
    return;
  }
  if (!pbng_gpbd_tet4_lane_hessians_supported(m->kind)) pbng_material_kind_invalid(m->kind);
  double cof[9][LANES], J[LANES], sh[LANES], c[LANES], v[LANES], dv[LANES];
  cofactor_lanes(F, cof, J);
  split_scalars(m, F, J, sh, c, v, dv);
#pragma GCC unroll 9
  for (int p = 0; p < 9; ++p)
#pragma omp simd
    for (int l = 0; l < LANES; ++l) P[p][l] = sh[l] * F[p][l] + v[l] * cof[p][l]; /* P = s F + v cof F */
}

void pbng_gpbd_tet4_lane_hessians(const pbng_material *m, const double F[9][LANES], const double dF[9][6][LANES], const double gram[6][6][LANES],
                                  double K[6][6][LANES])
{
  if (m->kind == PBNG_MATERIAL_STVK) stvk_hessians(m, F, dF, K);
  else if (pbng_gpbd_tet4_lane_hessians_supported(m->kind)) split_hessians(m, F, dF, gram, K);
  else pbng_material_kind_invalid(m->kind);
}
