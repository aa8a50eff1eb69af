#include "core/gpbd_local.h"
#include <math.h>
#include <string.h>
#include "core/dense.h"
#include "core/element.h"
#include "core/inversion.h"
#include "core/mat3.h"

/* ---- positive definite Hessians (Sec. 4.2, Eq. 23) ---- */

/* Householder vector of column j of R (k rows, stride values apart) below the diagonal: v (rows j..k-1), returns v^T v
 * (0: nothing to do). */
static inline double householder_vector(int k, int stride, const double *R, int j, double *v)
{
  double norm2 = 0;
  for (int i = j; i < k; ++i) v[i] = R[stride * i + j], norm2 += v[i] * v[i];
  const double norm = sqrt(norm2), alpha = v[j] >= 0 ? -norm : norm;
  v[j] -= alpha; /* x - alpha e_j, alpha of the sign opposite to x_j: no cancellation */
  double vv = 0;
  for (int i = j; i < k; ++i) vv += v[i] * v[i];
  return vv;
}

/* The reflection I - 2 v v^T / vv (v: rows j..5) applied to the columns of M (6 rows of 8 values, the last two padding),
 * all eight at once: M <- H_j M, column c's sums as one column alone would take them. */
static inline void reflect_columns6(double M[6][8], int j, const double v[6], double vv)
{
  double f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = j; i < 6; ++i)
#pragma omp simd
    for (int c = 0; c < 8; ++c) f[c] += v[i] * M[i][c];
#pragma omp simd
  for (int c = 0; c < 8; ++c) f[c] = 2 * f[c] / vv;
  for (int i = j; i < 6; ++i)
#pragma omp simd
    for (int c = 0; c < 8; ++c) M[i][c] -= f[c] * v[i];
}

/* out = M^T on the leading 6 x 6 (padding zero). */
static inline void transpose6(const double M[6][8], double out[6][8])
{
  for (int i = 0; i < 6; ++i) {
    for (int c = 0; c < 6; ++c) out[i][c] = M[c][i];
    out[i][6] = out[i][7] = 0.0;
  }
}

/* pbng_gpbd_qr_iterations for k = 6 (the tetrahedra's Hessians), the same operations on vector rows: each reflection
 * on the six columns of R at once, and A <- A H_j on A^T, its six rows as columns. */
static void qr_iterations6(int iterations, const double *H, double *A)
{
  double R[6][8], T[6][8], v[6][6], vv[6];
  for (int i = 0; i < 6; ++i) {
    for (int c = 0; c < 6; ++c) R[i][c] = H[6 * i + c];
    R[i][6] = R[i][7] = 0.0;
  }
  for (int it = 0; it < iterations; ++it) {
    for (int j = 0; j + 1 < 6; ++j) { /* R <- H_j R: A = Q R with Q = H_0 H_1 ... */
      vv[j] = householder_vector(6, 8, &R[0][0], j, v[j]);
      if (vv[j] > 0) reflect_columns6(R, j, v[j], vv[j]);
    }
    transpose6((const double(*)[8])R, T);
    for (int j = 0; j + 1 < 6; ++j) /* A <- A H_j: A = R Q = Q^T (old A) Q, as A^T <- H_j A^T */
      if (vv[j] > 0) reflect_columns6(T, j, v[j], vv[j]);
    transpose6((const double(*)[8])T, R);
  }
  for (int i = 0; i < 6; ++i)
    for (int c = 0; c < 6; ++c) A[6 * i + c] = R[i][c];
}

/* ---- the QR iterations of several 6 x 6 matrices on SIMD lanes ---- */

/* QR_LANES whole 6 x 6 matrices: M[i][c][l] is lane l's entry (i, c). */
typedef double qr_lanes[6][6][PBNG_GPBD_QR_LANES];

/* householder_vector on every lane (column j of R, rows j..5): v and v^T v, each lane's the scalar one bitwise (the
 * same sums in the same order; the sign of alpha by a select). */
static inline __attribute__((always_inline)) void householder_lanes(const qr_lanes R, int j, double v[6][PBNG_GPBD_QR_LANES],
                                                                    double vv[PBNG_GPBD_QR_LANES])
{
  double norm2[PBNG_GPBD_QR_LANES];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) norm2[l] = 0, vv[l] = 0;
#pragma GCC unroll 6
  for (int i = j; i < 6; ++i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) v[i][l] = R[i][j][l], norm2[l] += v[i][l] * v[i][l];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) {
    const double norm = sqrt(norm2[l]), alpha = v[j][l] >= 0 ? -norm : norm;
    v[j][l] -= alpha;
  }
#pragma GCC unroll 6
  for (int i = j; i < 6; ++i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) vv[l] += v[i][l] * v[i][l];
}

/* reflect_columns6 on every lane: M <- H_j M (rows = 0), column c's sums as the scalar code takes them; or M <- M H_j
 * (rows = 1): the same on M^T (qr_iterations6's reflection of the transpose's columns), M's rows read in place of the
 * transpose's columns. A lane whose vv is not > 0 keeps M (the scalar code skips its reflection). */
static inline __attribute__((always_inline)) void reflect_lanes(qr_lanes M, int j, const double v[6][PBNG_GPBD_QR_LANES], const double vv[PBNG_GPBD_QR_LANES],
                                                                int rows)
{
#pragma GCC unroll 6
  for (int c = 0; c < 6; ++c) {
    double f[PBNG_GPBD_QR_LANES];
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) f[l] = 0;
#pragma GCC unroll 6
    for (int i = j; i < 6; ++i) {
      const double *e = rows ? M[c][i] : M[i][c];
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) f[l] += v[i][l] * e[l];
    }
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) f[l] = 2 * f[l] / vv[l];
#pragma GCC unroll 6
    for (int i = j; i < 6; ++i) {
      double *e = rows ? M[c][i] : M[i][c];
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) {
        const double m = e[l] - f[l] * v[i][l];
        e[l] = vv[l] > 0 ? m : e[l];
      }
    }
  }
}

/* qr_iterations6 on every lane of M (overwritten by A): each lane's A bitwise the scalar one. */
static void qr_iterations_lanes(int iterations, qr_lanes M)
{
  double v[6][6][PBNG_GPBD_QR_LANES], vv[6][PBNG_GPBD_QR_LANES];
  for (int it = 0; it < iterations; ++it) {
#pragma GCC unroll 5
    for (int j = 0; j + 1 < 6; ++j) { /* R <- H_j R: A = Q R with Q = H_0 H_1 ... */
      householder_lanes((const double(*)[6][PBNG_GPBD_QR_LANES])M, j, v[j], vv[j]);
      reflect_lanes(M, j, (const double(*)[PBNG_GPBD_QR_LANES])v[j], vv[j], 0);
    }
#pragma GCC unroll 5
    for (int j = 0; j + 1 < 6; ++j) /* A <- A H_j: A = R Q = Q^T (old A) Q */
      reflect_lanes(M, j, (const double(*)[PBNG_GPBD_QR_LANES])v[j], vv[j], 1);
  }
}

void pbng_gpbd_qr_iterations6_lanes(int n, int iterations, const double (*H)[36], double (*A)[36])
{
  for (int b = 0; b < n; b += PBNG_GPBD_QR_LANES) {
    qr_lanes M;
    for (int l = 0; l < PBNG_GPBD_QR_LANES; ++l) /* lanes past n: the first matrix again (finite) */
      for (int k = 0; k < 36; ++k) M[k / 6][k % 6][l] = H[b + (b + l < n ? l : 0)][k];
    qr_iterations_lanes(iterations, M);
    for (int l = 0; l < PBNG_GPBD_QR_LANES && b + l < n; ++l)
      for (int k = 0; k < 36; ++k) A[b + l][k] = M[k / 6][k % 6][l];
  }
}

void pbng_gpbd_qr_iterations(int k, int iterations, const double *H, double *A)
{
  double R[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF], v[PBNG_GPBD_MAX_DOF][PBNG_GPBD_MAX_DOF], vv[PBNG_GPBD_MAX_DOF];
  if (k == 6) {
    qr_iterations6(iterations, H, A);
    return;
  }
  memmove(A, H, sizeof(double) * k * k);
  for (int it = 0; it < iterations; ++it) {
    memcpy(R, A, sizeof(double) * k * k);
    for (int j = 0; j + 1 < k; ++j) { /* R <- H_j R: A = Q R with Q = H_0 H_1 ... */
      vv[j] = householder_vector(k, k, R, j, v[j]);
      if (!(vv[j] > 0)) continue;
      for (int c = 0; c < k; ++c) {
        double dot = 0;
        for (int i = j; i < k; ++i) dot += v[j][i] * R[k * i + c];
        const double f = 2 * dot / vv[j];
        for (int i = j; i < k; ++i) R[k * i + c] -= f * v[j][i];
      }
    }
    memcpy(A, R, sizeof(double) * k * k);
    for (int j = 0; j + 1 < k; ++j) { /* A <- A H_j: A = R Q = Q^T (old A) Q */
      if (!(vv[j] > 0)) continue;
      for (int r = 0; r < k; ++r) {
        double dot = 0;
        for (int i = j; i < k; ++i) dot += A[k * r + i] * v[j][i];
        const double f = 2 * dot / vv[j];
        for (int i = j; i < k; ++i) A[k * r + i] -= f * v[j][i];
      }
    }
  }
}

double pbng_gpbd_gershgorin_bound(int k, const double *A)
{
  double bound = INFINITY;
  for (int i = 0; i < k; ++i) {
    double radius = 0;
    for (int j = 0; j < k; ++j)
      if (j != i) radius += fabs(A[k * i + j]);
    bound = fmin(bound, A[k * i + i] - radius); /* Eq. 23 */
  }
  return bound;
}

double pbng_gpbd_shift_qr_gershgorin(int k, double eps, double *H)
{
  double A[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF];
  pbng_gpbd_qr_iterations(k, 5, H, A); /* the seed's 5 QR iterations (Sec. 4.2) */
  const double tau = fmax(0.0, eps - pbng_gpbd_gershgorin_bound(k, A));
  for (int i = 0; i < k; ++i) H[k * i + i] += tau;
  return tau;
}

int pbng_gpbd_clamp_eigenvalues(int k, double eps, double *H)
{
  double A[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF], V[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF], lam[PBNG_GPBD_MAX_DOF];
  int raised = 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) A[k * i + j] = 0.5 * (H[k * i + j] + H[k * j + i]);
  dense_symmetric_eigen(k, A, lam, V);
  for (int c = 0; c < k; ++c)
    if (lam[c] < eps) lam[c] = eps, ++raised;
  if (!raised) return 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      double h = 0;
      for (int c = 0; c < k; ++c) h += V[k * i + c] * lam[c] * V[k * j + c];
      H[k * i + j] = h;
    }
  return raised;
}

/* 1 when H - eps I has a Cholesky factor (H positive definite with lambda_min > eps, to round-off). */
static int definite_beyond(int k, const double *H, double eps)
{
  double L[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF], b[PBNG_GPBD_MAX_DOF] = {0};
  memcpy(L, H, sizeof(double) * k * k);
  for (int i = 0; i < k; ++i) L[k * i + i] -= eps;
  return dense_spd_solve(k, L, b) == 0;
}

void pbng_gpbd_fix_hessian(pbng_gpbd_hessian_fix fix, int k, double eps, double *H)
{
  if (fix == PBNG_GPBD_FIX_QR_GERSHGORIN) (void)pbng_gpbd_shift_qr_gershgorin(k, eps, H);
  else if (fix == PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE && !definite_beyond(k, H, eps)) (void)pbng_gpbd_shift_qr_gershgorin(k, eps, H);
  else if (fix == PBNG_GPBD_FIX_EIGEN_CLAMP) (void)pbng_gpbd_clamp_eigenvalues(k, eps, H);
}

/* ---- the seed's fix on SIMD lanes (6 x 6) ---- */

typedef pbng_gpbd_lanes6 lanes6;

/* M = L D L^T (unit lower L, strictly lower part into Lo) on every lane; d the pivots; spd[l] cleared where one is
 * <= 0 (that lane's values are then meaningless, and kept finite). (fma: one rounding and half the latency.) */
static void ldlt_lanes(const lanes6 M, lanes6 Lo, double d[6][PBNG_GPBD_LANES], int *spd)
{
  double U[6][6][PBNG_GPBD_LANES]; /* U_ij = L_ij d_j (U_jj = d_j) */
#pragma GCC unroll 6
  for (int j = 0; j < 6; ++j) {
#pragma GCC unroll 6
    for (int i = j; i < 6; ++i) { /* M_ij - sum_k L_ik L_jk d_k, accumulated in registers */
      double acc[PBNG_GPBD_LANES];
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) acc[l] = M[i][j][l];
#pragma GCC unroll 6
      for (int k = 0; k < j; ++k)
#pragma omp simd
        for (int l = 0; l < PBNG_GPBD_LANES; ++l) acc[l] = fma(-Lo[i][k][l], U[j][k][l], acc[l]);
      memcpy(U[i][j], acc, sizeof(acc));
    }
    double r[PBNG_GPBD_LANES];
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      spd[l] &= U[j][j][l] > 0.0;
      d[j][l] = U[j][j][l] > 0.0 ? U[j][j][l] : 1.0;
      r[l] = 1.0 / d[j][l];
    }
#pragma GCC unroll 6
    for (int i = j + 1; i < 6; ++i)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) Lo[i][j][l] = U[i][j][l] * r[l];
  }
}

/* M <- L^T sigma L (lower triangle): (L^T sigma L)_ij = sum_{k >= i} L_ki sigma_k L_kj for i >= j, L_kk = 1. */
static void lr_product_lanes(const lanes6 Lo, const double sigma[6][PBNG_GPBD_LANES], lanes6 M)
{
  double V[6][6][PBNG_GPBD_LANES]; /* V_kj = sigma_k L_kj */
#pragma GCC unroll 6
  for (int k = 0; k < 6; ++k) {
#pragma GCC unroll 6
    for (int j = 0; j < k; ++j)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) V[k][j][l] = sigma[k][l] * Lo[k][j][l];
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) V[k][k][l] = sigma[k][l];
  }
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i)
#pragma GCC unroll 6
    for (int j = 0; j <= i; ++j) {
      double acc[PBNG_GPBD_LANES];
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) acc[l] = V[i][j][l];
#pragma GCC unroll 6
      for (int k = i + 1; k < 6; ++k)
#pragma omp simd
        for (int l = 0; l < PBNG_GPBD_LANES; ++l) acc[l] = fma(Lo[k][i][l], V[k][j][l], acc[l]);
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) M[i][j][l] = acc[l];
    }
}

/* The lanes' lower triangles from n row-major 6 x 6 matrices (unused lanes: the identity). */
static void to_lanes(int n, const double (*H)[36], lanes6 M)
{
  for (int l = 0; l < PBNG_GPBD_LANES; ++l)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j <= i; ++j) M[i][j][l] = l < n ? H[l][6 * i + j] : (double)(i == j);
}

/* pbng_gpbd_qr_gershgorin_bounds6 on the lanes M (overwritten), keeping the first step's factorisation of M
 * (Lo0, d0: M = L D L^T, the Newton step's when no shift is needed). */
static void lr_bounds(lanes6 M, lanes6 Lo0, double d0[6][PBNG_GPBD_LANES], double bound[PBNG_GPBD_LANES], int ok[PBNG_GPBD_LANES])
{
  lanes6 Lo;
  double sigma[6][PBNG_GPBD_LANES], d[6][PBNG_GPBD_LANES];
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    ok[l] = 1;
    for (int i = 0; i < 6; ++i) sigma[i][l] = 1.0;
  }
  for (int step = 0; step < 10; ++step) { /* 5 QR iterations (Sec. 4.2) = 10 LR steps */
    ldlt_lanes((const double(*)[6][PBNG_GPBD_LANES])M, step ? Lo : Lo0, step ? d : d0, ok);
    lr_product_lanes((const double(*)[6][PBNG_GPBD_LANES])(step ? Lo : Lo0), (const double(*)[PBNG_GPBD_LANES])sigma, M);
    memcpy(sigma, step ? d : d0, sizeof(sigma));
  }
  double sq[6][PBNG_GPBD_LANES];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) bound[l] = INFINITY;
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) sq[i][l] = sqrt(sigma[i][l]);
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) /* Eq. 23 on S M S, row i on every lane (x < b ? x : b is fmin(b, x): b is never NaN) */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double radius = 0.0;
      for (int j = 0; j < 6; ++j)
        if (j != i) radius += sq[j][l] * fabs(j < i ? M[i][j][l] : M[j][i][l]);
      const double x = sq[i][l] * (sq[i][l] * M[i][i][l] - radius);
      bound[l] = x < bound[l] ? x : bound[l];
    }
}

void pbng_gpbd_qr_gershgorin_bounds6(int n, const double (*H)[36], double *bound, int *spd)
{
  lanes6 M, Lo0;
  double d0[6][PBNG_GPBD_LANES], b[PBNG_GPBD_LANES];
  int ok[PBNG_GPBD_LANES];
  to_lanes(n, H, M);
  lr_bounds(M, Lo0, d0, b, ok);
  for (int l = 0; l < n; ++l) {
    spd[l] = ok[l];
    if (ok[l]) bound[l] = b[l];
  }
}

/* Lane l's matrix, row-major and symmetric, from the lanes' lower triangles. */
static void lane_matrix(const lanes6 M, int l, double H[36])
{
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j <= i; ++j) H[6 * i + j] = H[6 * j + i] = M[i][j][l];
}

/* Lane l's lower triangle from a row-major matrix. */
static void set_lane_matrix(const double H[36], int l, lanes6 M)
{
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j <= i; ++j) M[i][j][l] = H[6 * i + j];
}

/* pbng_gpbd_shift_qr_gershgorin(6, eps[l], .) of the lanes l of M with todo[l] (M's diagonal shifted), bitwise: the QR
 * iterations of up to PBNG_GPBD_QR_LANES of them at once on SIMD lanes (qr_iterations_lanes), Eq. 23 and the shift per
 * matrix. */
static void shift_qr_lanes(const int *todo, const double *eps, lanes6 M)
{
  int which[PBNG_GPBD_LANES], n = 0;
  for (int l = 0; l < PBNG_GPBD_LANES; ++l)
    if (todo[l]) which[n++] = l;
  for (int b = 0; b < n; b += PBNG_GPBD_QR_LANES) {
    qr_lanes R;
    for (int q = 0; q < PBNG_GPBD_QR_LANES; ++q) { /* lanes past n: the first matrix again (finite) */
      const int l = which[b + q < n ? b + q : b];
      for (int i = 0; i < 6; ++i)
        for (int c = 0; c < 6; ++c) R[i][c][q] = i >= c ? M[i][c][l] : M[c][i][l];
    }
    qr_iterations_lanes(5, R); /* the seed's 5 QR iterations (Sec. 4.2) */
    for (int q = 0; q < PBNG_GPBD_QR_LANES && b + q < n; ++q) {
      const int l = which[b + q];
      double A[36];
      for (int k = 0; k < 36; ++k) A[k] = R[k / 6][k % 6][q];
      const double tau = fmax(0.0, eps[l] - pbng_gpbd_gershgorin_bound(6, A));
      for (int i = 0; i < 6; ++i) M[i][i][l] += tau;
    }
  }
}

/* The seed's shift of the active lanes' matrices (Eq. 23): M += max(0, eps - bound) I from the LR bound, or by
 * pbng_gpbd_shift_qr_gershgorin where M is not positive definite. Returns 0 when every active M is positive
 * definite and unchanged: then the bound's first L D L^T (Lo0, d0) is every M's. */
static int shift_lanes(const int *active, const double *eps, lanes6 M, lanes6 Lo0, double d0[6][PBNG_GPBD_LANES])
{
  lanes6 W;
  double bound[PBNG_GPBD_LANES];
  int spd[PBNG_GPBD_LANES], changed = 0;
  memcpy(W, M, sizeof(W));
  lr_bounds(W, Lo0, d0, bound, spd);
  int indefinite[PBNG_GPBD_LANES];
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    indefinite[l] = active[l] && !spd[l];
    changed |= indefinite[l];
    if (!active[l] || !spd[l]) continue;
    const double tau = fmax(0.0, eps[l] - bound[l]);
    for (int i = 0; i < 6; ++i) M[i][i][l] += tau;
    changed |= tau != 0.0;
  }
  if (changed) shift_qr_lanes(indefinite, eps, M);
  return changed;
}

/* The fix of the active lanes' matrices: the seed's shift on the lanes (shift_lanes); the shift only where M - eps I
 * has no L D L^T with positive pivots (tested on the lanes); or each matrix by pbng_gpbd_fix_hessian. Returns 1
 * when (Lo0, d0) is every fixed M's factor (some M changed otherwise, or the fix does not factor). */
static int fix_lanes(pbng_gpbd_hessian_fix fix, const int *active, const double *eps, lanes6 M, lanes6 Lo0, double d0[6][PBNG_GPBD_LANES])
{
  if (fix == PBNG_GPBD_FIX_QR_GERSHGORIN) return !shift_lanes(active, eps, M, Lo0, d0);
  if (fix == PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE) {
    lanes6 W;
    int definite[PBNG_GPBD_LANES];
    memcpy(W, M, sizeof(W));
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      definite[l] = 1;
      for (int i = 0; i < 6; ++i) W[i][i][l] -= active[l] ? eps[l] : 0.0;
    }
    ldlt_lanes((const double(*)[6][PBNG_GPBD_LANES])W, Lo0, d0, definite); /* M - eps I: definite_beyond on lanes */
    int shift[PBNG_GPBD_LANES];
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) shift[l] = active[l] && !definite[l];
    shift_qr_lanes(shift, eps, M);
    return 0;
  }
  for (int l = 0; l < PBNG_GPBD_LANES; ++l)
    if (active[l]) {
      double H[36];
      lane_matrix((const double(*)[6][PBNG_GPBD_LANES])M, l, H);
      pbng_gpbd_fix_hessian(fix, 6, eps[l], H);
      set_lane_matrix(H, l, M);
    }
  return 0;
}

void pbng_gpbd_fix_hessians6(pbng_gpbd_hessian_fix fix, int n, const double *eps, double (*H)[36])
{
  lanes6 M, Lo0;
  double d0[6][PBNG_GPBD_LANES];
  int active[PBNG_GPBD_LANES];
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) active[l] = l < n;
  to_lanes(n, (const double(*)[36])H, M);
  (void)fix_lanes(fix, active, eps, M, Lo0, d0);
  for (int l = 0; l < n; ++l) lane_matrix((const double(*)[6][PBNG_GPBD_LANES])M, l, H[l]);
}

void pbng_gpbd_newton_steps6(pbng_gpbd_hessian_fix fix, const int *active, const double *eps, pbng_gpbd_lanes6 H, const double g[6][PBNG_GPBD_LANES],
                             double step[6][PBNG_GPBD_LANES], int *ok)
{
  lanes6 Lo;
  double d[6][PBNG_GPBD_LANES];
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    ok[l] = 1;
    if (!active[l]) /* the identity: finite factors */
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j <= i; ++j) H[i][j][l] = (double)(i == j);
  }
  if (!fix_lanes(fix, active, eps, H, Lo, d)) /* else: the fix's factor is H's */
    ldlt_lanes((const double(*)[6][PBNG_GPBD_LANES])H, Lo, d, ok);
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) { /* L y = -g */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) step[i][l] = active[l] ? -g[i][l] : 0.0;
#pragma GCC unroll 6
    for (int k = 0; k < i; ++k)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) step[i][l] = fma(-Lo[i][k][l], step[k][l], step[i][l]);
  }
#pragma GCC unroll 6
  for (int i = 5; i >= 0; --i) { /* L^T x = D^-1 y */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) step[i][l] /= d[i][l];
#pragma GCC unroll 6
    for (int k = i + 1; k < 6; ++k)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) step[i][l] = fma(-Lo[k][i][l], step[k][l], step[i][l]);
  }
}

/* ---- the local solve (Eq. 19) ---- */

void pbng_gpbd_newton_defaults(pbng_gpbd_newton_options *o)
{
  o->newton_max = 20, o->gtol = 0.0, o->rtol = 1e-10;
  o->fix = PBNG_GPBD_FIX_QR_GERSHGORIN, o->eps = 1e-8;
  o->line_search = 1, o->armijo = 1e-4, o->max_backtracks = 40;
}

/* The state of one solve: the term, its fixed data and W S^T. */
typedef struct {
  const pbng_gpbd_term *t;
  int n3, k;
  const double *x, *w, *d;
  double WSt[PBNG_GPBD_MAX_DOF][PBNG_GPBD_MAX_K]; /* (W S^T)[v][r] = w_{v/3} S[r][v] (Eq. 18) */
} local_problem;

/* dd = W S^T dl (Eq. 18) and y = x + dd. */
static void displacement(const local_problem *p, const double *dl, double *dd, double *y)
{
  for (int v = 0; v < p->n3; ++v) {
    double s = 0;
    for (int r = 0; r < p->k; ++r) s += p->WSt[v][r] * dl[r];
    dd[v] = s, y[v] = p->x[v] + s;
  }
}

/* phi of Eq. 19 from dd and U(y): 1/2 sum_{w_a > 0} |d_a + dd_a|^2 / w_a + U. */
static double objective(const local_problem *p, const double *dd, double U)
{
  double q = 0;
  for (int v = 0; v < p->n3; ++v) {
    const double wa = p->w[v / 3];
    if (wa > 0) q += (p->d[v] + dd[v]) * (p->d[v] + dd[v]) / wa;
  }
  return 0.5 * q + U;
}

/* grad phi = S (d + dd + W dU/dx(y)) (module comment); returns its norm. */
static double objective_gradient(const local_problem *p, const double *S, const double *dd, const double *gradU, double *g)
{
  double r[PBNG_GPBD_MAX_DOF], norm2 = 0;
  for (int v = 0; v < p->n3; ++v) r[v] = p->d[v] + dd[v] + p->w[v / 3] * gradU[v];
  for (int i = 0; i < p->k; ++i) {
    double s = 0;
    for (int v = 0; v < p->n3; ++v) s += S[p->n3 * i + v] * r[v];
    g[i] = s, norm2 += s * s;
  }
  return sqrt(norm2);
}

/* hess phi = S W S^T + (W S^T)^T d^2U/dx^2 (W S^T) (module comment). */
static void objective_hessian(const local_problem *p, const double *S, const double *hessU, double *H)
{
  const int k = p->k, n3 = p->n3;
  double HW[PBNG_GPBD_MAX_DOF][PBNG_GPBD_MAX_K]; /* d^2U (W S^T) */
  for (int u = 0; u < n3; ++u)
    for (int r = 0; r < k; ++r) {
      double s = 0;
      for (int v = 0; v < n3; ++v) s += hessU[n3 * u + v] * p->WSt[v][r];
      HW[u][r] = s;
    }
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      double s = 0;
      for (int v = 0; v < n3; ++v) s += S[n3 * i + v] * p->WSt[v][j] + p->WSt[v][i] * HW[v][j];
      H[k * i + j] = s;
    }
  for (int i = 0; i < k; ++i) /* exact symmetry (round-off) for the Cholesky and the eigen solver */
    for (int j = i + 1; j < k; ++j) H[k * i + j] = H[k * j + i] = 0.5 * (H[k * i + j] + H[k * j + i]);
}

pbng_gpbd_status pbng_gpbd_local_solve(const pbng_gpbd_term *t, const double *x, const double *w, const double *d, const double *S,
                                       const pbng_gpbd_newton_options *o, double *dl, double *dd, pbng_gpbd_local_result *res)
{
  local_problem p = {.t = t, .n3 = 3 * t->nnodes, .k = t->k, .x = x, .w = w, .d = d};
  double y[PBNG_GPBD_MAX_DOF] = {0}, gradU[PBNG_GPBD_MAX_DOF], hessU[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF];
  double g[PBNG_GPBD_MAX_K], H[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K], step[PBNG_GPBD_MAX_K];
  double dl_t[PBNG_GPBD_MAX_K], dd_t[PBNG_GPBD_MAX_DOF], y_t[PBNG_GPBD_MAX_DOF];
  pbng_gpbd_local_result r = {.status = PBNG_GPBD_MAX_ITERATIONS};
  const int k = p.k, n3 = p.n3;

  for (int v = 0; v < n3; ++v)
    for (int i = 0; i < k; ++i) p.WSt[v][i] = w[v / 3] * S[n3 * i + v];
  for (int i = 0; i < k; ++i) dl[i] = 0;
  displacement(&p, dl, dd, y);
  double U = t->energy(t->ctx, y, gradU, hessU);
  if (!isfinite(U)) {
    r.status = PBNG_GPBD_INVALID_START, r.phi0 = r.phi = INFINITY, r.grad0 = r.grad = NAN;
    if (res) *res = r;
    return r.status;
  }
  double phi = objective(&p, dd, U), tol = 0;
  r.phi0 = phi;
  for (;;) {
    const double gn = objective_gradient(&p, S, dd, gradU, g);
    if (r.iterations == 0) r.grad0 = gn, tol = fmax(o->gtol, o->rtol * gn);
    r.grad = gn;
    if (gn <= tol) {
      r.status = PBNG_GPBD_CONVERGED;
      break;
    }
    if (r.iterations >= o->newton_max) {
      r.status = PBNG_GPBD_MAX_ITERATIONS;
      break;
    }
    objective_hessian(&p, S, hessU, H);
    double scale = 0;
    for (int i = 0; i < k; ++i) scale = fmax(scale, fabs(H[k * i + i]));
    pbng_gpbd_fix_hessian(o->fix, k, o->eps * scale, H);
    double slope = 0;
    for (int i = 0; i < k; ++i) step[i] = -g[i];
    if (dense_spd_solve(k, H, step)) {
      r.status = PBNG_GPBD_NOT_DESCENT;
      break;
    }
    for (int i = 0; i < k; ++i) slope += g[i] * step[i];
    if (!(slope < 0)) {
      r.status = PBNG_GPBD_NOT_DESCENT;
      break;
    }
    /* Armijo backtracking: phi(dl + a step) <= phi(dl) + c1 a slope, and strictly below phi(dl) (a step too
     * small to change phi is no step); +inf (the barrier) never accepted. Once the predicted decrease
     * -slope is below 1e-12 |phi|, phi's round-off (a sum of terms, each with its own) can no longer tell a
     * decrease (|grad phi| ~ 1e-6 relative): the step is then accepted when phi is finite (Newton's step
     * near the minimiser), so that tighter gradient tolerances stay reachable. */
    const int roundoff = -slope <= PBNG_GPBD_ROUNDOFF_DECREASE * fabs(phi);
    double a = 1.0, phi_t = INFINITY;
    int accepted = 0;
    for (int bt = 0; bt <= o->max_backtracks; ++bt, a *= 0.5) {
      for (int i = 0; i < k; ++i) dl_t[i] = dl[i] + a * step[i];
      displacement(&p, dl_t, dd_t, y_t);
      phi_t = objective(&p, dd_t, t->energy(t->ctx, y_t, NULL, NULL));
      if (isfinite(phi_t) && (!o->line_search || roundoff || (phi_t <= phi + o->armijo * a * slope && phi_t < phi))) {
        accepted = 1;
        break;
      }
    }
    if (!accepted) {
      r.status = PBNG_GPBD_LINE_SEARCH_FAILED;
      break;
    }
    memcpy(dl, dl_t, sizeof(double) * k), memcpy(dd, dd_t, sizeof(double) * n3), memcpy(y, y_t, sizeof(double) * n3);
    phi = phi_t;
    U = t->energy(t->ctx, y, gradU, hessU);
    ++r.iterations;
  }
  r.phi = phi;
  r.decreased = phi < r.phi0 || r.iterations == 0;
  if (res) *res = r;
  return r.status;
}

/* ---- one term's update around the local solve ---- */

void pbng_gpbd_subspace_multipliers(int k, const double *A, const double *b, int regular, double *mu)
{
  double L[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K];
  memcpy(L, A, sizeof(double) * (size_t)(k * k));
  memcpy(mu, b, sizeof(double) * (size_t)k);
  if (regular && !dense_spd_solve(k, L, mu)) return;
  double lam[PBNG_GPBD_MAX_K], V[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K], top = 0.0; /* the pseudo-inverse */
  memcpy(L, A, sizeof(double) * (size_t)(k * k));
  dense_symmetric_eigen(k, L, lam, V);
  for (int q = 0; q < k; ++q) top = fmax(top, fabs(lam[q]));
  for (int r = 0; r < k; ++r) mu[r] = 0.0;
  for (int q = 0; q < k; ++q) {
    if (!(lam[q] > 1e-12 * top)) continue;
    double c = 0.0;
    for (int r = 0; r < k; ++r) c += V[k * r + q] * b[r];
    c /= lam[q];
    for (int r = 0; r < k; ++r) mu[r] += c * V[k * r + q];
  }
}

double pbng_gpbd_gradient_floor(int n, int k, const double *S, const double *d, const double *w, const double *fa, double gtol)
{
  const int dof = 3 * n;
  double c[PBNG_GPBD_MAX_DOF]; /* each value's scale, |d_j| + w_j fa_j */
  for (int j = 0; j < dof; ++j) c[j] = fabs(d[j]) + w[j / 3] * fa[j / 3];
  for (int r = 0; r < k; ++r) {
    double v = 0.0;
    for (int j = 0; j < dof; ++j) v += fabs(S[dof * r + j]) * c[j];
    gtol = fmax(gtol, PBNG_GPBD_GRADIENT_ROUNDOFF * v);
  }
  return gtol;
}

void pbng_gpbd_tet_force_scales(const pbng_gpbd_tet_rest *r, double k_shear, double k_volume, const double s[6], double fa[4])
{
  const double F2 = 3.0 + 2.0 * (s[0] + s[1] + s[2]);
  const double pscale = r->volume * (k_shear + fabs(k_volume)) * fmax(1.0, F2);
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(r->B, a, g);
    fa[a] = pscale * (fabs(g[0]) + fabs(g[1]) + fabs(g[2]));
  }
}

/* ---- inverted tetrahedra (Sec. 4.1) ---- */

int pbng_gpbd_tet_uninvert(const pbng_gpbd_tet_rest *r, const double x[4][3], double s_min, double xout[4][3])
{
  double F[9], U[9], s[3], V[9], Fp[9], Dm[9], Ds[9], c[3] = {0, 0, 0};
  pbng_gpbd_tet_deformation(r, x, F);
  if (mat3_det(F) > 0) {
    memcpy(xout, x, sizeof(double) * 12);
    return 0;
  }
  pbng_svd3_rotations(F, U, s, V); /* s2 <= 0 carries the reflection */
  s[2] = fmax(fabs(s[2]), s_min);  /* negate the smallest singular value (Sec. 4.1) */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Fp[3 * i + j] = U[3 * i] * s[0] * V[3 * j] + U[3 * i + 1] * s[1] * V[3 * j + 1] + U[3 * i + 2] * s[2] * V[3 * j + 2];
  mat3_inverse(r->B, Dm);
  mat3_mul(Fp, Dm, Ds); /* the new edge vectors x'_a - x'_0 (columns) */
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) c[i] += 0.25 * x[a][i];
  for (int i = 0; i < 3; ++i) {
    xout[0][i] = c[i] - 0.25 * (Ds[3 * i] + Ds[3 * i + 1] + Ds[3 * i + 2]); /* the centroid kept */
    for (int a = 1; a < 4; ++a) xout[a][i] = xout[0][i] + Ds[3 * i + a - 1];
  }
  return 1;
}

void pbng_gpbd_tet_uninvert_moving(const pbng_gpbd_tet_rest *r, double s_min, const double w[4], double x[4][3], double pre[12])
{
  double F[9], xo[4][3];
  pbng_gpbd_tet_deformation(r, (const double(*)[3])x, F);
  if (!(mat3_det(F) <= 0.0 && pbng_gpbd_tet_uninvert(r, (const double(*)[3])x, s_min, xo))) return;
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3 && w[a] > 0; ++k) {
      pre[3 * a + k] = xo[a][k] - x[a][k];
      x[a][k] = xo[a][k];
    }
}
