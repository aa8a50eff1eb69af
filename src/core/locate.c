#include "core/locate.h"
#include <math.h>
#include "core/contact_geometry.h"
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
    double bc[3], p[3];
    const double d2 = pbng_point_triangle_closest(q, X[face[f][0]], X[face[f][1]], X[face[f][2]], bc, p);
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
