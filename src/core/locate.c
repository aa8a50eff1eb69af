#include "core/locate.h"
#include <math.h>
#include "core/element.h"

int pbng_tet_barycentric(const double *const X[4], const double q[3], double w[4])
{
  double B[9], d[3];
  const double V = pbng_tet_rest_shape(X[0], X[1], X[2], X[3], B); /* B = Dm^{-1} */
  if (!(V != 0.0) || !isfinite(V)) return -1;
  for (int k = 0; k < 3; ++k) d[k] = q[k] - X[0][k];
  for (int a = 0; a < 3; ++a) w[a + 1] = B[3 * a] * d[0] + B[3 * a + 1] * d[1] + B[3 * a + 2] * d[2]; /* lambda = Dm^{-1} (q - X0) */
  w[0] = 1.0 - w[1] - w[2] - w[3];
  return 0;
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Closest point of the triangle (a, b, c) to p, as barycentric weights (u, v, w) of (a, b, c); returns
 * the squared distance (the region tests of Ericson, Real-Time Collision Detection, 5.1.5). */
static double point_triangle(const double p[3], const double a[3], const double b[3], const double c[3], double bc[3])
{
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k], bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
  const double d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp), d5 = dot3(ab, cp), d6 = dot3(ac, cp);
  double u, v, w;
  if (d1 <= 0 && d2 <= 0) u = 1, v = 0, w = 0; /* vertex a */
  else if (d3 >= 0 && d4 <= d3) u = 0, v = 1, w = 0; /* vertex b */
  else if (d6 >= 0 && d5 <= d6) u = 0, v = 0, w = 1; /* vertex c */
  else {
    const double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { /* edge ab */
      const double t = d1 / (d1 - d3);
      u = 1 - t, v = t, w = 0;
    } else if (vb <= 0 && d2 >= 0 && d6 <= 0) { /* edge ac */
      const double t = d2 / (d2 - d6);
      u = 1 - t, v = 0, w = t;
    } else if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) { /* edge bc */
      const double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
      u = 0, v = 1 - t, w = t;
    } else { /* inside the face */
      const double s = 1.0 / (va + vb + vc);
      v = vb * s, w = vc * s, u = 1 - v - w;
    }
  }
  double dist2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double x = u * a[k] + v * b[k] + w * c[k] - p[k];
    dist2 += x * x;
  }
  bc[0] = u, bc[1] = v, bc[2] = w;
  return dist2;
}

double pbng_point_tet_distance(const double *const X[4], const double q[3], double wclosest[4])
{
  static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  double w[4];
  if (pbng_tet_barycentric(X, q, w) == 0 && w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0) {
    for (int a = 0; a < 4; ++a) wclosest[a] = w[a];
    return 0.0;
  }
  double best = INFINITY;
  for (int f = 0; f < 4; ++f) {
    double bc[3];
    const double d2 = point_triangle(q, X[face[f][0]], X[face[f][1]], X[face[f][2]], bc);
    if (d2 < best) {
      best = d2;
      for (int a = 0; a < 4; ++a) wclosest[a] = 0;
      for (int j = 0; j < 3; ++j) wclosest[face[f][j]] = bc[j];
    }
  }
  return sqrt(best);
}

double pbng_tet_longest_edge(const double *const X[4])
{
  double h2 = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double d2 = 0;
      for (int k = 0; k < 3; ++k) d2 += (X[a][k] - X[b][k]) * (X[a][k] - X[b][k]);
      if (d2 > h2) h2 = d2;
    }
  return sqrt(h2);
}
