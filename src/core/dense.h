/* Small dense symmetric systems: positive definite solves (PBNG's weak-constraint blocks: up to 24
 * unknowns) and the eigen decomposition of a small symmetric matrix (GPBD's local Hessians, k <= 6).
 * No allocation. */
#ifndef PBNG_CORE_DENSE_H
#define PBNG_CORE_DENSE_H

#include <math.h>

/* Solves A x = b in place (b becomes x) by Cholesky, A row-major n x n (overwritten by its factor).
 * Returns 0, or -1 when A is not positive definite (b untouched then only in part). */
static inline int dense_spd_solve(int n, double *A, double *b)
{
  for (int j = 0; j < n; ++j) {
    double d = A[n * j + j];
    for (int k = 0; k < j; ++k) d -= A[n * j + k] * A[n * j + k];
    if (!(d > 0.0)) return -1;
    A[n * j + j] = sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = A[n * i + j];
      for (int k = 0; k < j; ++k) s -= A[n * i + k] * A[n * j + k];
      A[n * i + j] = s / A[n * j + j];
    }
  }
  for (int i = 0; i < n; ++i) { /* L y = b */
    for (int k = 0; k < i; ++k) b[i] -= A[n * i + k] * b[k];
    b[i] /= A[n * i + i];
  }
  for (int i = n - 1; i >= 0; --i) { /* L^T x = y */
    for (int k = i + 1; k < n; ++k) b[i] -= A[n * k + i] * b[k];
    b[i] /= A[n * i + i];
  }
  return 0;
}

/* Eigen decomposition of the symmetric A (row-major n x n, n <= DENSE_EIGEN_MAX) by cyclic Jacobi
 * rotations: A = V diag(w) V^T, the columns of V (row-major n x n) the eigenvectors, w in no particular
 * order. A is overwritten (its diagonal ends as w). Sweeps until the off-diagonal mass is below 1e-32
 * of the diagonal's (round-off), at most 60. The generalisation of core/inversion.c's 3 x 3 one. */
enum { DENSE_EIGEN_MAX = 18 };
static inline void dense_symmetric_eigen(int n, double *A, double *w, double *V)
{
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) V[n * i + j] = i == j;
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (int i = 0; i < n; ++i) {
      diag += A[n * i + i] * A[n * i + i];
      for (int j = i + 1; j < n; ++j) off += A[n * i + j] * A[n * i + j];
    }
    if (off == 0.0 || off <= 1e-32 * diag) break;
    for (int p = 0; p < n - 1; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = A[n * p + q];
        if (apq == 0.0) continue;
        const double theta = 0.5 * (A[n * q + q] - A[n * p + p]) / apq;
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1)), c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) { /* A <- A J (columns p, q) */
          const double akp = A[n * k + p], akq = A[n * k + q];
          A[n * k + p] = c * akp - s * akq, A[n * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) { /* A <- J^T A (rows p, q) */
          const double apk = A[n * p + k], aqk = A[n * q + k];
          A[n * p + k] = c * apk - s * aqk, A[n * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          const double vkp = V[n * k + p], vkq = V[n * k + q];
          V[n * k + p] = c * vkp - s * vkq, V[n * k + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < n; ++i) w[i] = A[n * i + i];
}

#endif
