/* Random cloth stencils for the unit tests of the six-dimensional cloth strain (test_gpbd_kernels) and of
 * its energy (test_cloth6): a triangle and the vertex across each of its edges, rigidly placed. */
#pragma once
#include <stdint.h>
#include "test_check.h"

/* q = R p + t for n points. */
static inline void rigid(int n, const double R[3][3], const double t[3], const double (*p)[3], double (*q)[3])
{
  for (int a = 0; a < n; ++a)
    for (int i = 0; i < 3; ++i) q[a][i] = R[i][0] * p[a][0] + R[i][1] * p[a][1] + R[i][2] * p[a][2] + t[i];
}

/* A random stencil: a rest triangle and, across each edge i, the parallelogram's fourth vertex plus noise
 * (in the plane; lifted by `lift` out of it for a curved rest patch), rigidly placed in 3-D. */
static inline void random_stencil(uint64_t *s, double lift, double X[6][3])
{
  double P[6][3], R[3][3], t[3];
  const double base[3][2] = {{0, 0}, {1, 0}, {0.3, 0.9}};
  for (int a = 0; a < 3; ++a) P[a][0] = base[a][0] + 0.15 * (next_random(s) - 0.5), P[a][1] = base[a][1] + 0.15 * (next_random(s) - 0.5), P[a][2] = 0;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    for (int c = 0; c < 2; ++c) P[3 + i][c] = P[j][c] + P[k][c] - P[i][c] + 0.2 * (next_random(s) - 0.5);
    P[3 + i][2] = lift * (2 * next_random(s) - 1);
  }
  random_rotation_matrix(s, R);
  for (int k = 0; k < 3; ++k) t[k] = 2 * next_random(s) - 1;
  rigid(6, R, t, (const double(*)[3])P, X);
}
