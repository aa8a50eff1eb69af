/* Small dense symmetric positive definite systems (PBNG's weak-constraint blocks: up to 24 unknowns).
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

#endif
