#include "core/bending.h"
#include <math.h>
#include <string.h>
#include "core/vec3.h"

/* |a x b| */
static double cross_norm(const double a[3], const double b[3])
{
  double c[3];
  vec3_cross(a, b, c);
  return vec3_norm(c);
}

/* Cotangent of the angle between a and b. */
static double cot_between(const double a[3], const double b[3]) { return vec3_dot(a, b) / cross_norm(a, b); }

/* Twice the area of triangle (p, q, r), 0 when it is degenerate in the sense of pbng_bending_rest. */
static double twice_area(const double p[3], const double q[3], const double r[3])
{
  double a[3], b[3], c[3];
  for (int k = 0; k < 3; ++k) a[k] = q[k] - p[k], b[k] = r[k] - p[k], c[k] = r[k] - q[k];
  const double len = cross_norm(a, b), longest = fmax(vec3_dot(a, a), fmax(vec3_dot(b, b), vec3_dot(c, c)));
  return len > 1e-12 * longest && isfinite(len) ? len : 0.0;
}

int pbng_bending_rest(const double X[4][3], pbng_bending_stencil *s)
{
  memset(s, 0, sizeof(*s));
  const double A0 = 0.5 * twice_area(X[0], X[1], X[2]), A1 = 0.5 * twice_area(X[0], X[1], X[3]);
  if (!(A0 > 0) || !(A1 > 0)) return -1;
  double e01[3], e02[3], e03[3], e10[3], e12[3], e13[3];
  for (int k = 0; k < 3; ++k) {
    e01[k] = X[1][k] - X[0][k], e02[k] = X[2][k] - X[0][k], e03[k] = X[3][k] - X[0][k];
    e10[k] = -e01[k], e12[k] = X[2][k] - X[1][k], e13[k] = X[3][k] - X[1][k];
  }
  const double c01 = cot_between(e10, e12); /* at x1 in (x0, x1, x2) */
  const double c02 = cot_between(e01, e02); /* at x0 in (x0, x1, x2) */
  const double c03 = cot_between(e01, e03); /* at x0 in (x0, x1, x3) */
  const double c04 = cot_between(e10, e13); /* at x1 in (x0, x1, x3) */
  s->K[0] = c01 + c04, s->K[1] = c02 + c03, s->K[2] = -c01 - c02, s->K[3] = -c03 - c04;
  s->scale = 3.0 / (A0 + A1);
  return 0;
}

double pbng_bending_q(const pbng_bending_stencil *s, int i, int j) { return s->scale * s->K[i] * s->K[j]; }

/* v = sum_i K_i x_i */
static void curvature_vector(const pbng_bending_stencil *s, const double x[4][3], double v[3])
{
  for (int k = 0; k < 3; ++k) v[k] = s->K[0] * x[0][k] + s->K[1] * x[1][k] + s->K[2] * x[2][k] + s->K[3] * x[3][k];
}

double pbng_bending_energy(const pbng_bending_stencil *s, double k_b, const double x[4][3])
{
  double v[3];
  curvature_vector(s, x, v);
  return 0.5 * k_b * s->scale * vec3_dot(v, v);
}

double pbng_bending_gradient(const pbng_bending_stencil *s, double k_b, const double x[4][3], double grad[4][3])
{
  double v[3];
  curvature_vector(s, x, v);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) grad[i][k] = k_b * s->scale * s->K[i] * v[k];
  return 0.5 * k_b * s->scale * vec3_dot(v, v);
}
