/* Small dense 3x3 algebra. Matrices are row-major double[9]: A[3*r + c]. No allocation, no state. */
#ifndef PBNG_CORE_MAT3_H
#define PBNG_CORE_MAT3_H

/* Small helpers of the per-node kernels: always inlined. Left to its heuristics, GCC stopped inlining
 * mat3_cofactor into pbng_node_force once that function had grown (six material x element-family
 * kernels): the linear-tet fast path lost 30 % of its throughput. */
#define PBNG_HOT_INLINE static inline __attribute__((always_inline))

#include <math.h>

PBNG_HOT_INLINE double mat3_det(const double A[9])
{
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* Cofactor matrix cof(A) = det(A) A^{-T}, defined for every A (singular and inverted too). */
PBNG_HOT_INLINE void mat3_cofactor(const double A[9], double C[9])
{
  C[0] = A[4] * A[8] - A[5] * A[7];
  C[1] = A[5] * A[6] - A[3] * A[8];
  C[2] = A[3] * A[7] - A[4] * A[6];
  C[3] = A[2] * A[7] - A[1] * A[8];
  C[4] = A[0] * A[8] - A[2] * A[6];
  C[5] = A[1] * A[6] - A[0] * A[7];
  C[6] = A[1] * A[5] - A[2] * A[4];
  C[7] = A[2] * A[3] - A[0] * A[5];
  C[8] = A[0] * A[4] - A[1] * A[3];
}

/* det(A) from A's cofactor, reusing the work: det A = sum_c A[0][c] cof[0][c]. */
PBNG_HOT_INLINE double mat3_det_from_cofactor(const double A[9], const double C[9])
{
  return A[0] * C[0] + A[1] * C[1] + A[2] * C[2];
}

/* Inverse; returns the determinant (the caller decides what a small one means). */
PBNG_HOT_INLINE double mat3_inverse(const double A[9], double Ainv[9])
{
  double C[9];
  mat3_cofactor(A, C);
  const double det = mat3_det_from_cofactor(A, C);
  const double s = 1.0 / det;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) Ainv[3 * r + c] = C[3 * c + r] * s;
  return det;
}

PBNG_HOT_INLINE void mat3_mul(const double A[9], const double B[9], double C[9])
{
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
}

/* C = A^T B */
PBNG_HOT_INLINE void mat3_tmul(const double A[9], const double B[9], double C[9])
{
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      C[3 * r + c] = A[r] * B[c] + A[3 + r] * B[3 + c] + A[6 + r] * B[6 + c];
}

PBNG_HOT_INLINE void mat3_transpose(const double A[9], double T[9])
{
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) T[3 * c + r] = A[3 * r + c];
}

PBNG_HOT_INLINE double mat3_frobenius_sq(const double A[9])
{
  double s = 0.0;
  for (int k = 0; k < 9; ++k) s += A[k] * A[k];
  return s;
}

PBNG_HOT_INLINE double mat3_ddot(const double A[9], const double B[9])
{
  double s = 0.0;
  for (int k = 0; k < 9; ++k) s += A[k] * B[k];
  return s;
}

/* y = A x */
PBNG_HOT_INLINE void mat3_vec(const double A[9], const double x[3], double y[3])
{
  y[0] = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
  y[1] = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
  y[2] = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
}

PBNG_HOT_INLINE void mat3_identity(double A[9])
{
  for (int k = 0; k < 9; ++k) A[k] = (k % 4 == 0) ? 1.0 : 0.0;
}

/* Solve the symmetric positive definite system A x = b by Cholesky (A's upper triangle unused). */
PBNG_HOT_INLINE void mat3_spd_solve(const double A[9], const double b[3], double x[3])
{
  const double l00 = sqrt(A[0]);
  const double l10 = A[3] / l00, l20 = A[6] / l00;
  const double l11 = sqrt(A[4] - l10 * l10);
  const double l21 = (A[7] - l20 * l10) / l11;
  const double l22 = sqrt(A[8] - l20 * l20 - l21 * l21);
  const double y0 = b[0] / l00;
  const double y1 = (b[1] - l10 * y0) / l11;
  const double y2 = (b[2] - l20 * y0 - l21 * y1) / l22;
  x[2] = y2 / l22;
  x[1] = (y1 - l21 * x[2]) / l11;
  x[0] = (y0 - l10 * x[1] - l20 * x[2]) / l00;
}

#endif
