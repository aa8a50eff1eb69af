/* The value checks and the random numbers of the C unit tests that compare numbers (included). */
#ifndef PBNG_TESTS_TEST_CHECK_H
#define PBNG_TESTS_TEST_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures, checks;

/* Counts a check; prints what failed with the two values compared. */
static inline void check(int ok, const char *what, double a, double b)
{
  ++checks;
  if (!ok) {
    ++failures;
    printf("FAIL: %s (%.12g vs %.12g)\n", what, a, b);
  }
}

/* xorshift64: uniform in [0, 1). */
static inline double next_random(uint64_t *s)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* A random rotation R (row-major 3 x 3) from a random unit quaternion. */
static inline void random_rotation_matrix(uint64_t *s, double R[3][3])
{
  double q[4], n = 0;
  for (int k = 0; k < 4; ++k) q[k] = 2 * next_random(s) - 1, n += q[k] * q[k];
  n = sqrt(n);
  for (int k = 0; k < 4; ++k) q[k] /= n;
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double M[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  memcpy(R, M, sizeof(M));
}

#endif
