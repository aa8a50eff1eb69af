#include "core/ccd.h"
#include <math.h>
#include "core/contact_geometry.h"
#include "core/vec3.h"

/* (1 - t) a + t b */
static void lerp(const double a[3], const double b[3], double t, double p[3])
{
  for (int k = 0; k < 3; ++k) p[k] = (1 - t) * a[k] + t * b[k];
}

static double distance2(const double p[3], const double q[3])
{
  double d[3];
  vec3_sub(p, q, d);
  return vec3_dot(d, d);
}

double pbng_point_segment_closest(const double x[3], const double a[3], const double b[3], double *t)
{
  double ab[3], ax[3], p[3];
  vec3_sub(b, a, ab), vec3_sub(x, a, ax);
  const double L2 = vec3_dot(ab, ab);
  *t = L2 > 0 ? fmin(fmax(vec3_dot(ax, ab) / L2, 0.0), 1.0) : 0.0;
  lerp(a, b, *t, p);
  return distance2(x, p);
}

/* Keeps (s, t) and its squared distance d2 when d2 is below *best. */
static void keep_if_closer(double d2, double s, double t, double *best, double *best_s, double *best_t)
{
  if (d2 < *best) *best = d2, *best_s = s, *best_t = t;
}

/* The stationary point of |a0 + s ea - b0 - t eb|^2 (ea = a1 - a0, eb = b1 - b0): with r = a0 - b0,
 * a = ea.ea, b = ea.eb, c = eb.eb, d = ea.r, e = eb.r, it solves a s - b t = -d, -b s + c t = e, so
 * s = (b e - c d) / (a c - b^2), t = (a e - b d) / (a c - b^2). Returns 1 when it is finite and in
 * [0, 1]^2 (never for parallel segments, whose determinant is 0). */
static int interior_stationary_point(const double a0[3], const double a1[3], const double b0[3], const double b1[3], double *s, double *t)
{
  double ea[3], eb[3], r[3];
  vec3_sub(a1, a0, ea), vec3_sub(b1, b0, eb), vec3_sub(a0, b0, r);
  const double a = vec3_dot(ea, ea), b = vec3_dot(ea, eb), c = vec3_dot(eb, eb), d = vec3_dot(ea, r), e = vec3_dot(eb, r);
  const double det = a * c - b * b;
  if (!(det > 0)) return 0;
  *s = (b * e - c * d) / det, *t = (a * e - b * d) / det;
  return *s >= 0 && *s <= 1 && *t >= 0 && *t <= 1; /* false for NaN and inf */
}

double pbng_segment_segment_closest(const double a0[3], const double a1[3], const double b0[3], const double b1[3], double *s, double *t)
{
  /* The squared distance is a convex quadratic of (s, t) on [0, 1]^2: its minimum is the interior
   * stationary point or lies on an edge of the square, i.e. is an endpoint-segment distance. Every
   * candidate is evaluated from its two points, so a poorly conditioned interior solve (near-parallel
   * segments) can only give a candidate that is a true distance, never one below the minimum. */
  double best = INFINITY, u, v, p[3], q[3];
  *s = *t = 0;
  if (interior_stationary_point(a0, a1, b0, b1, &u, &v)) {
    lerp(a0, a1, u, p), lerp(b0, b1, v, q);
    keep_if_closer(distance2(p, q), u, v, &best, s, t);
  }
  for (int end = 0; end < 2; ++end) { /* the edges s = end and t = end of the square */
    const double da = pbng_point_segment_closest(end ? a1 : a0, b0, b1, &v);
    keep_if_closer(da, end, v, &best, s, t);
    const double db = pbng_point_segment_closest(end ? b1 : b0, a0, a1, &u);
    keep_if_closer(db, u, end, &best, s, t);
  }
  return best;
}

/* ---- additive CCD ---- */

typedef enum { PRIMITIVES_POINT_TRIANGLE, PRIMITIVES_EDGE_EDGE } primitives;

/* The corners x + t dx. */
static void positions_at(const double x[4][3], const double dx[4][3], double t, double y[4][3])
{
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) y[i][k] = x[i][k] + t * dx[i][k];
}

double pbng_point_triangle_distance_at(const double x[4][3], const double dx[4][3], double t)
{
  double y[4][3], w[3], p[3];
  positions_at(x, dx, t, y);
  return sqrt(pbng_point_triangle_closest(y[0], y[1], y[2], y[3], w, p));
}

double pbng_edge_edge_distance_at(const double x[4][3], const double dx[4][3], double t)
{
  double y[4][3], u, v;
  positions_at(x, dx, t, y);
  return sqrt(pbng_segment_segment_closest(y[0], y[1], y[2], y[3], &u, &v));
}

static double distance_at(primitives kind, const double x[4][3], const double dx[4][3], double t)
{
  return kind == PRIMITIVES_POINT_TRIANGLE ? pbng_point_triangle_distance_at(x, dx, t) : pbng_edge_edge_distance_at(x, dx, t);
}

/* l_p of C-IPC's ACCD: with the displacements shifted by their mean (the distance does not change
 * under a common translation), the largest displacement of a point of the first primitive plus the
 * largest of the second. Every point of a primitive is a convex combination of its corners, so the
 * distance between the primitives changes by at most l_p per unit of t (it is 1-Lipschitz in the
 * relative position of any pair of their points). */
static double relative_speed_bound(primitives kind, const double dx[4][3])
{
  double mean[3] = {0, 0, 0}, len[4];
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) mean[k] += 0.25 * dx[i][k];
  for (int i = 0; i < 4; ++i) {
    double p[3];
    vec3_sub(dx[i], mean, p);
    len[i] = vec3_norm(p);
  }
  if (kind == PRIMITIVES_POINT_TRIANGLE) return len[0] + fmax(len[1], fmax(len[2], len[3]));
  return fmax(len[0], len[1]) + fmax(len[2], len[3]);
}

/* Conservative advancement: from a gap g = d - xi at time t no distance falls to xi before
 * t + g / l_p, so each advance is s g / l_p (the distance stays >= xi + (1 - s) g over it). The first
 * advance is always taken (C-IPC: the returned time is then at least s g0 / l_p > 0); after it, the
 * search stops at the first advance whose end gap is below (1 - s) g0 and returns the time before
 * that advance, where the gap is still >= (1 - s) g0. An advance reaching t = 1 returns 1. */
static double additive_ccd(primitives kind, const double x[4][3], const double dx[4][3], double xi, double s, int max_iterations)
{
  const double gap0 = distance_at(kind, x, dx, 0) - xi;
  if (!(gap0 > 0)) return 0;
  const double lp = relative_speed_bound(kind, dx);
  if (lp == 0) return 1; /* a rigid translation (or no motion) keeps the distance */
  if (!isfinite(lp)) return 0; /* NaN or infinite displacements: no safe advance */
  const double target = (1 - s) * gap0;
  double t = 0, gap = gap0;
  for (int it = 0; it < max_iterations; ++it) {
    const double next = t + s * gap / lp;
    if (next >= 1) return 1;
    const double next_gap = distance_at(kind, x, dx, next) - xi;
    if (it > 0 && next_gap < target) return t;
    t = next, gap = next_gap;
    if (!(gap > 0)) return t; /* only by rounding: [0, t] is covered by the advances already taken */
  }
  return t;
}

double pbng_accd_point_triangle(const double x[4][3], const double dx[4][3], double thickness, double s, int max_iterations)
{
  return additive_ccd(PRIMITIVES_POINT_TRIANGLE, x, dx, thickness, s, max_iterations);
}

double pbng_accd_edge_edge(const double x[4][3], const double dx[4][3], double thickness, double s, int max_iterations)
{
  return additive_ccd(PRIMITIVES_EDGE_EDGE, x, dx, thickness, s, max_iterations);
}

/* ---- a point passing through a moving triangle ---- */

/* g(t) = (x0 - x1).((x2 - x1) x (x3 - x1)) with the corners at x + t dx: six times the signed volume of the
 * tetrahedron (x1, x2, x3, x0), positive with the point in front of the triangle. */
static double orientation_at(const double x[4][3], const double dx[4][3], double t)
{
  double y[4][3], a[3], b[3], c[3], n[3];
  positions_at(x, dx, t, y);
  vec3_sub(y[0], y[1], a), vec3_sub(y[2], y[1], b), vec3_sub(y[3], y[1], c);
  vec3_cross(b, c, n);
  return vec3_dot(a, n);
}

/* The coefficients c[0] + c[1] t + c[2] t^2 + c[3] t^3 of the cubic g, from its values at t = 0, 1/3, 2/3, 1. */
static void orientation_cubic(const double x[4][3], const double dx[4][3], double c[4])
{
  const double g0 = orientation_at(x, dx, 0), g1 = orientation_at(x, dx, 1.0 / 3), g2 = orientation_at(x, dx, 2.0 / 3),
               g3 = orientation_at(x, dx, 1);
  c[0] = g0;
  c[1] = (-11 * g0 + 18 * g1 - 9 * g2 + 2 * g3) / 2;
  c[2] = 9 * (2 * g0 - 5 * g1 + 4 * g2 - g3) / 2;
  c[3] = 9 * (-g0 + 3 * g1 - 3 * g2 + g3) / 2;
}

/* The points 0 = s[0] < ... < s[n-1] = 1 between which g is monotone (the real roots of g' = c1 + 2 c2 t + 3 c3 t^2
 * inside (0, 1)); returns n (2 to 4). */
static int monotone_pieces(const double c[4], double s[4])
{
  const double A = 3 * c[3], B = 2 * c[2], C = c[1];
  double r[2];
  int m = 0;
  if (fabs(A) > 1e-14 * (fabs(B) + fabs(C))) {
    const double disc = B * B - 4 * A * C;
    if (disc > 0) {
      const double q = -0.5 * (B + copysign(sqrt(disc), B));
      r[m++] = q / A;
      if (q != 0) r[m++] = C / q;
    }
  } else if (B != 0)
    r[m++] = -C / B;
  if (m == 2 && r[1] < r[0]) {
    const double tmp = r[0];
    r[0] = r[1], r[1] = tmp;
  }
  int n = 0;
  s[n++] = 0;
  for (int k = 0; k < m; ++k)
    if (r[k] > 0 && r[k] < 1 && r[k] > s[n - 1]) s[n++] = r[k];
  s[n++] = 1;
  return n;
}

/* Whether the point lies in the closed triangle at time t (within 1e-9 of its longest edge; not for a degenerate one). */
static int inside_at(const double x[4][3], const double dx[4][3], double t)
{
  double y[4][3], w[3], p[3], n[3], e[3];
  positions_at(x, dx, t, y);
  if (!(pbng_triangle_normal(y[1], y[2], y[3], n) > 0)) return 0;
  double L2 = 0;
  for (int a = 0; a < 3; ++a) {
    vec3_sub(y[1 + (a + 1) % 3], y[1 + a], e);
    L2 = fmax(L2, vec3_dot(e, e));
  }
  return pbng_point_triangle_closest(y[0], y[1], y[2], y[3], w, p) <= 1e-18 * L2;
}

int pbng_point_triangle_crossing(const double x[4][3], const double dx[4][3], double *t)
{
  double c[4], s[4];
  orientation_cubic(x, dx, c);
  const int n = monotone_pieces(c, s);
  for (int k = 0; k + 1 < n; ++k) {
    double lo = s[k], hi = s[k + 1];
    if (!(orientation_at(x, dx, lo) > 0 && orientation_at(x, dx, hi) <= 0)) continue;
    for (int it = 0; it < 64 && hi - lo > 1e-15; ++it) { /* g(lo) > 0 >= g(hi) */
      const double mid = 0.5 * (lo + hi);
      if (orientation_at(x, dx, mid) > 0) lo = mid;
      else hi = mid;
    }
    if (inside_at(x, dx, hi)) {
      *t = hi;
      return 1;
    }
  }
  return 0;
}
