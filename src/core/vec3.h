/* Small 3-vector helpers (double[3]): dot and cross products, difference, length. No state. */
#ifndef PBNG_CORE_VEC3_H
#define PBNG_CORE_VEC3_H

#include <math.h>
#include "core/mat3.h" /* PBNG_HOT_INLINE */

PBNG_HOT_INLINE double vec3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* c = a - b */
PBNG_HOT_INLINE void vec3_sub(const double a[3], const double b[3], double c[3])
{
  for (int k = 0; k < 3; ++k) c[k] = a[k] - b[k];
}

/* c = a x b (c must not alias a or b) */
PBNG_HOT_INLINE void vec3_cross(const double a[3], const double b[3], double c[3])
{
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

PBNG_HOT_INLINE double vec3_norm(const double a[3]) { return sqrt(vec3_dot(a, a)); }

#endif
