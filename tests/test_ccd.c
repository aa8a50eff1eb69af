/* Distances and additive CCD (src/core/ccd.c, seed projective-peridynamics-membranes.txt Sec. 6.2):
 * point-segment and segment-segment closest points against the optimality conditions of a convex
 * quadratic on [0, 1]^2 and against brute-force minimisation on a fine parameter grid (random, parallel,
 * near-parallel, collinear, crossing and zero-length segments); ACCD for point-triangle and edge-edge
 * against a brute-force root finder (10^4 samples of the distance along the step, then bisection) on
 * thousands of random linear trajectories (random, aimed at an impact, near-parallel and sliding,
 * grazing: the thickness set at the closest approach): the returned time never passes the first time
 * the distance falls to the thickness, the gap stays above (1 - s)^2 of its start before it and above
 * (1 - s) of it there, and how tight it is (printed); closed-form cases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/ccd.h"
#include "test_check.h"

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double norm(const double a[3]) { return sqrt(dot(a, a)); }
static double dist(const double a[3], const double b[3])
{
  const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return norm(d);
}
static void random_point(uint64_t *s, double lo, double hi, double p[3])
{
  for (int k = 0; k < 3; ++k) p[k] = lo + (hi - lo) * next_random(s);
}
static void lerp(const double a[3], const double b[3], double t, double p[3])
{
  for (int k = 0; k < 3; ++k) p[k] = (1 - t) * a[k] + t * b[k];
}
/* A unit vector orthogonal to the unit vector u. */
static void orthogonal_unit(const double u[3], double n[3])
{
  const double e[3] = {fabs(u[0]) < 0.6 ? 1.0 : 0.0, fabs(u[0]) < 0.6 ? 0.0 : 1.0, 0.0};
  const double c = dot(e, u);
  for (int k = 0; k < 3; ++k) n[k] = e[k] - c * u[k];
  const double l = norm(n);
  for (int k = 0; k < 3; ++k) n[k] /= l;
}

/* ---- distances ---- */

/* The optimality condition of min over s in [0, 1] of a convex quadratic with derivative g at s:
 * g = 0 inside, g >= 0 at 0, g <= 0 at 1 (to tol). */
static int optimal(double s, double g, double tol) { return s <= 0 ? g >= -tol : s >= 1 ? g <= tol : fabs(g) <= tol; }

static void check_point_segment(void)
{
  uint64_t s = 0x9e3779b97f4a7c15ull;
  double worst_gap = 0;
  for (int n = 0; n < 2000; ++n) {
    double x[3], a[3], b[3], t;
    random_point(&s, -1, 1, x), random_point(&s, -1, 1, a);
    if (n % 10 == 0) for (int k = 0; k < 3; ++k) b[k] = a[k]; /* zero length */
    else random_point(&s, -1, 1, b);
    const double d2 = pbng_point_segment_closest(x, a, b, &t);
    double p[3], best = INFINITY;
    lerp(a, b, t, p);
    check(t >= 0 && t <= 1 && fabs(d2 - dist(x, p) * dist(x, p)) <= 1e-14, "point-segment: t in [0, 1], the distance its point's", t, d2);
    for (int i = 0; i <= 10000; ++i) {
      double q[3];
      lerp(a, b, i / 10000.0, q);
      best = fmin(best, dist(x, q));
    }
    const double L = dist(a, b);
    check(sqrt(d2) <= best + 1e-14 && sqrt(d2) >= best - L / 20000.0, "point-segment: against 10^4 samples", sqrt(d2), best);
    worst_gap = fmax(worst_gap, best - sqrt(d2));
  }
  printf("point-segment: 2000 queries, sampled minimum at most %.2e above the closest distance\n", worst_gap);
}

/* Segments of the kind `kind` (0 random, 1 parallel, 2 near-parallel, 3 collinear, 4 crossing, 5 one of
 * zero length, 6 both of zero length). */
static void random_segments(uint64_t *s, int kind, double a0[3], double a1[3], double b0[3], double b1[3])
{
  random_point(s, -1, 1, a0), random_point(s, -1, 1, a1), random_point(s, -1, 1, b0), random_point(s, -1, 1, b1);
  double e[3], n[3], m[3];
  for (int k = 0; k < 3; ++k) e[k] = a1[k] - a0[k];
  const double L = norm(e);
  for (int k = 0; k < 3; ++k) e[k] /= L;
  orthogonal_unit(e, n);
  const double angle = kind == 2 ? pow(10.0, -12 + 9 * next_random(s)) : 0;
  const double h = kind == 3 ? 0 : pow(10.0, -6 + 6 * next_random(s)), lb = 2 * next_random(s), off = 3 * next_random(s) - 1.5;
  switch (kind) {
  case 1: case 2: case 3: /* b along e rotated by `angle` towards n, offset by h along n */
    for (int k = 0; k < 3; ++k) m[k] = cos(angle) * e[k] + sin(angle) * n[k];
    for (int k = 0; k < 3; ++k) b0[k] = a0[k] + off * L * e[k] + h * n[k], b1[k] = b0[k] + lb * m[k];
    break;
  case 4: { /* through a point of a, along a random direction, lifted by h */
    const double u = next_random(s), v = next_random(s);
    double p[3], d[3];
    lerp(a0, a1, u, p);
    random_point(s, -1, 1, d);
    for (int k = 0; k < 3; ++k) b0[k] = p[k] - v * d[k] + h * n[k], b1[k] = p[k] + (1 - v) * d[k] + h * n[k];
    break;
  }
  case 5: for (int k = 0; k < 3; ++k) b1[k] = b0[k]; break;
  case 6: for (int k = 0; k < 3; ++k) b1[k] = b0[k], a1[k] = a0[k]; break;
  default: break;
  }
}

static void check_segment_segment(void)
{
  uint64_t s = 0xfeedfaceull;
  const int per_kind = 300, m = 300;
  double worst_grid = 0;
  for (int kind = 0; kind < 7; ++kind)
    for (int n = 0; n < per_kind; ++n) {
      double a0[3], a1[3], b0[3], b1[3], u, v, p[3], q[3], ea[3], eb[3], r[3];
      random_segments(&s, kind, a0, a1, b0, b1);
      const double d2 = pbng_segment_segment_closest(a0, a1, b0, b1, &u, &v);
      lerp(a0, a1, u, p), lerp(b0, b1, v, q);
      for (int k = 0; k < 3; ++k) ea[k] = a1[k] - a0[k], eb[k] = b1[k] - b0[k], r[k] = p[k] - q[k];
      const double La = norm(ea), Lb = norm(eb), scale = La + Lb + dist(a0, b0);
      check(u >= 0 && u <= 1 && v >= 0 && v <= 1 && fabs(d2 - dot(r, r)) <= 1e-15 * scale * scale, "segment-segment: s, t in [0, 1], the distance their points'", u, v);
      /* d/ds |r|^2 / 2 = r.ea, d/dt = -r.eb */
      const double tol = 1e-12 * scale * scale;
      check(optimal(u, dot(r, ea), tol) && optimal(v, -dot(r, eb), tol), "segment-segment: optimality conditions", dot(r, ea), dot(r, eb));
      double best = INFINITY;
      for (int i = 0; i <= m; ++i) {
        lerp(a0, a1, (double)i / m, p);
        for (int j = 0; j <= m; ++j) {
          lerp(b0, b1, (double)j / m, q);
          best = fmin(best, dist(p, q));
        }
      }
      const double d = sqrt(d2);
      check(d <= best + 1e-14 * scale && d >= best - (La + Lb) / (2.0 * m), "segment-segment: against a 301 x 301 parameter grid", d, best);
      worst_grid = fmax(worst_grid, (best - d) / ((La + Lb) / m + 1e-300));
    }
  printf("segment-segment: %d queries (random, parallel, near-parallel, collinear, crossing, zero-length), grid minimum at most %.3f grid steps above\n",
         7 * per_kind, worst_grid);
}

/* ---- additive CCD ---- */

typedef enum { POINT_TRIANGLE, EDGE_EDGE } pair_kind;

static double distance_at(pair_kind kind, const double x[4][3], const double dx[4][3], double t)
{
  return kind == POINT_TRIANGLE ? pbng_point_triangle_distance_at(x, dx, t) : pbng_edge_edge_distance_at(x, dx, t);
}

static double accd(pair_kind kind, const double x[4][3], const double dx[4][3], double xi, double s, int max_iterations)
{
  return kind == POINT_TRIANGLE ? pbng_accd_point_triangle(x, dx, xi, s, max_iterations) : pbng_accd_edge_edge(x, dx, xi, s, max_iterations);
}

#define SAMPLES 2000

/* The brute-force time of impact: the first of SAMPLES + 1 uniform samples of t at which the distance
 * is <= xi, refined by 60 bisections between it and the sample before; *hit is that refined time's
 * upper end (a time where the distance is <= xi), or INFINITY when no sample is <= xi. Also the
 * smallest sampled gap (distance - xi) at t <= t_accd. */
static double brute_force_toi(pair_kind kind, const double x[4][3], const double dx[4][3], double xi, double t_accd, double *min_gap_before, double *hit)
{
  *min_gap_before = INFINITY, *hit = INFINITY;
  for (int i = 0; i <= SAMPLES; ++i) {
    const double t = (double)i / SAMPLES, gap = distance_at(kind, x, dx, t) - xi;
    if (t <= t_accd) *min_gap_before = fmin(*min_gap_before, gap);
    if (gap <= 0) {
      if (i == 0) return *hit = 0;
      double lo = (double)(i - 1) / SAMPLES, hi = t;
      for (int b = 0; b < 60; ++b) {
        const double mid = 0.5 * (lo + hi);
        if (distance_at(kind, x, dx, mid) - xi <= 0) hi = mid;
        else lo = mid;
      }
      *hit = hi;
      for (int j = i + 1; j <= SAMPLES && (double)j / SAMPLES <= t_accd; ++j) /* the rest of [0, t_accd] */
        *min_gap_before = fmin(*min_gap_before, distance_at(kind, x, dx, (double)j / SAMPLES) - xi);
      return 0.5 * (lo + hi);
    }
  }
  return INFINITY;
}

/* Trajectory categories. */
enum { RANDOM, AIMED, SLIDING, GRAZING, CATEGORIES };
static const char *const category_name[CATEGORIES] = {"random", "aimed", "near-parallel/sliding", "grazing"};

static double random_thickness(uint64_t *s)
{
  static const double xis[4] = {0, 1e-4, 1e-2, 0.1};
  return xis[(int)(4 * next_random(s)) & 3];
}

/* The thickness just around the closest approach (within 1 %), or half of it when that is the start. */
static double closest_approach_thickness(uint64_t *s, pair_kind kind, const double x[4][3], const double dx[4][3])
{
  double lowest = INFINITY;
  int at = 0;
  for (int i = 0; i <= 2000; ++i) {
    const double d = distance_at(kind, x, dx, i / 2000.0);
    if (d < lowest) lowest = d, at = i;
  }
  return at == 0 ? 0.5 * lowest : lowest * (1 + 0.02 * (next_random(s) - 0.5));
}

/* A point-triangle trajectory of the category; returns the thickness. */
static double point_triangle_trajectory(uint64_t *s, int category, double x[4][3], double dx[4][3])
{
  for (int i = 0; i < 4; ++i) random_point(s, -1, 1, x[i]), random_point(s, -1, 1, dx[i]);
  if (category == AIMED) { /* the point passes through a point of the triangle at t* */
    const double ts = 0.05 + 0.95 * next_random(s);
    double w1 = next_random(s), w2 = next_random(s);
    if (w1 + w2 > 1) w1 = 1 - w1, w2 = 1 - w2;
    for (int k = 0; k < 3; ++k) {
      for (int i = 1; i < 4; ++i) dx[i][k] *= 0.3;
      const double target = (1 - w1 - w2) * (x[1][k] + ts * dx[1][k]) + w1 * (x[2][k] + ts * dx[2][k]) + w2 * (x[3][k] + ts * dx[3][k]);
      dx[0][k] = (target - x[0][k]) / ts;
    }
  } else if (category == SLIDING) { /* a flat triangle, the point skimming along it, slowly sinking */
    for (int i = 1; i < 4; ++i) x[i][2] = 0, dx[i][0] *= 0.1, dx[i][1] *= 0.1, dx[i][2] = 0;
    x[0][0] *= 0.3, x[0][1] *= 0.3, x[0][2] = pow(10.0, -3 + 2 * next_random(s));
    dx[0][2] = -x[0][2] * (0.5 + next_random(s));
  }
  if (category != GRAZING) return random_thickness(s);
  return closest_approach_thickness(s, POINT_TRIANGLE, x, dx);
}

/* An edge-edge trajectory of the category; returns the thickness. */
static double edge_edge_trajectory(uint64_t *s, int category, double x[4][3], double dx[4][3])
{
  for (int i = 0; i < 4; ++i) random_point(s, -1, 1, x[i]), random_point(s, -1, 1, dx[i]);
  if (category == AIMED) { /* a point of edge b meets a point of edge a at t* */
    const double ts = 0.05 + 0.95 * next_random(s), sa = next_random(s), ub = 0.2 + 0.6 * next_random(s);
    for (int k = 0; k < 3; ++k) {
      const double target = (1 - sa) * (x[0][k] + ts * dx[0][k]) + sa * (x[1][k] + ts * dx[1][k]);
      dx[3][k] = ((target - (1 - ub) * (x[2][k] + ts * dx[2][k])) / ub - x[3][k]) / ts;
    }
  } else if (category == SLIDING) { /* nearly parallel edges closing their distance */
    double e[3], n[3], m[3];
    for (int k = 0; k < 3; ++k) e[k] = x[1][k] - x[0][k];
    const double L = norm(e), angle = pow(10.0, -9 + 8 * next_random(s)), h = pow(10.0, -3 + 3 * next_random(s));
    for (int k = 0; k < 3; ++k) e[k] /= L;
    orthogonal_unit(e, n);
    for (int k = 0; k < 3; ++k) m[k] = cos(angle) * e[k] + sin(angle) * n[k];
    const double off = L * (next_random(s) - 0.5), speed = h * (0.5 + next_random(s));
    for (int k = 0; k < 3; ++k) {
      x[2][k] = x[0][k] + off * e[k] + h * n[k], x[3][k] = x[2][k] + L * m[k];
      dx[0][k] = dx[1][k] = 0.2 * dx[0][k];
      dx[2][k] = dx[0][k] - speed * n[k] + 0.3 * e[k], dx[3][k] = dx[1][k] - speed * n[k] + 0.3 * e[k];
    }
  }
  if (category != GRAZING) return random_thickness(s);
  return closest_approach_thickness(s, EDGE_EDGE, x, dx);
}

static int compare_doubles(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Runs per_category trajectories of each category for one pair kind and conservative factor s. */
static void check_accd(pair_kind kind, double s_factor, int per_category)
{
  static double ratios[CATEGORIES * 1000];
  const char *name = kind == POINT_TRIANGLE ? "point-triangle" : "edge-edge";
  uint64_t s = kind == POINT_TRIANGLE ? 0x1234abcdull : 0x9876fedcull;
  s ^= (uint64_t)(s_factor * 1000);
  int impacts = 0, starts_inside = 0, tight = 0, misses = 0, misses_full = 0, violations = 0, tight_by[CATEGORIES] = {0}, impacts_by[CATEGORIES] = {0};
  char what[160];
  for (int c = 0; c < CATEGORIES; ++c)
    for (int n = 0; n < per_category; ++n) {
      double x[4][3], dx[4][3];
      const double xi = kind == POINT_TRIANGLE ? point_triangle_trajectory(&s, c, x, dx) : edge_edge_trajectory(&s, c, x, dx);
      const double t = accd(kind, x, dx, xi, s_factor, PBNG_ACCD_MAX_ITERATIONS);
      double min_gap_before, hit;
      const double toi = brute_force_toi(kind, x, dx, xi, t, &min_gap_before, &hit);
      const double gap0 = distance_at(kind, x, dx, 0) - xi;
      snprintf(what, sizeof(what), "%s %s (s = %g): t in [0, 1], below the first sampled time at the thickness", name, category_name[c], s_factor);
      const int ok = t >= 0 && t <= 1 && (t < hit || (t == 0 && hit == 0));
      check(ok, what, t, hit);
      if (!(gap0 > 0)) {
        ++starts_inside;
        check(t == 0, "starting within the thickness gives 0", t, 0);
        continue;
      }
      /* before t every advance kept >= (1 - s) of a gap >= (1 - s) gap0; at t < 1 the gap is >= (1 - s) gap0 */
      const double keep = (1 - s_factor) * gap0;
      snprintf(what, sizeof(what), "%s %s: the gap on [0, t] stays >= (1 - s)^2 of its start", name, category_name[c]);
      check(min_gap_before >= (1 - s_factor) * keep * (1 - 1e-9) - 1e-15, what, min_gap_before, (1 - s_factor) * keep);
      if (t < 1) {
        const double gap_t = distance_at(kind, x, dx, t) - xi;
        snprintf(what, sizeof(what), "%s %s: the gap at t < 1 is >= (1 - s) of its start", name, category_name[c]);
        check(gap_t >= keep * (1 - 1e-9) - 1e-15, what, gap_t, keep);
      }
      violations += !ok;
      if (toi <= 1) {
        ratios[impacts++] = t / toi;
        ++impacts_by[c];
        if (t >= 0.5 * toi) ++tight, ++tight_by[c];
      } else {
        ++misses;
        misses_full += t == 1;
      }
    }
  qsort(ratios, (size_t)impacts, sizeof(double), compare_doubles);
  const double fraction = impacts ? (double)tight / impacts : 1;
  {
    printf("ACCD %s, s = %g: %d trajectories, %d start within the thickness, %d impacts, %d misses; t > TOI in %d; "
           "t/TOI min %.3g, 5%% %.3g, median %.3g; t >= TOI/2 in %.1f%% of impacts (",
           name, s_factor, CATEGORIES * per_category, starts_inside, impacts, misses, violations, impacts ? ratios[0] : 1.0,
           impacts ? ratios[impacts / 20] : 1.0, impacts ? ratios[impacts / 2] : 1.0, 100 * fraction);
    for (int c = 0; c < CATEGORIES; ++c)
      printf("%s%s %d/%d", c ? ", " : "", category_name[c], tight_by[c], impacts_by[c]);
    printf("); t = 1 for %d of the %d misses\n", misses_full, misses);
  }
  snprintf(what, sizeof(what), "%s (s = %g): t >= TOI/2 in >= 95%% of impacts", name, s_factor);
  if (s_factor >= 0.9) check(fraction >= 0.95, what, fraction, 0.95);
  check(impacts >= CATEGORIES * per_category / 4, "enough impacting trajectories", impacts, CATEGORIES * per_category / 4);
}

/* Closed forms: a point falling head-on onto a static triangle; a rigid translation; no motion;
 * starting within the thickness; a NaN displacement; one advance only; edges head-on. */
static void check_accd_closed_forms(void)
{
  const double x[4][3] = {{0.2, 0.2, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const double fall[4][3] = {{0, 0, -2}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  const double xi = 0.1, toi = (1 - xi) / 2; /* l_p = 1.5 + 0.5 = 2, the relative speed */
  const double t = pbng_accd_point_triangle(x, fall, xi, PBNG_ACCD_CONSERVATIVE, PBNG_ACCD_MAX_ITERATIONS);
  /* l_p is the closing speed: the first advance leaves exactly (1 - s) gap0, the next falls below it */
  check(t <= toi && fabs(t - PBNG_ACCD_CONSERVATIVE * toi) <= 1e-14, "head-on fall: t = s TOI", t, PBNG_ACCD_CONSERVATIVE * toi);
  double shift[4][3];
  for (int i = 0; i < 4; ++i) shift[i][0] = 50, shift[i][1] = -30, shift[i][2] = -7;
  check(pbng_accd_point_triangle(x, shift, xi, 0.9, 100) == 1 && pbng_accd_edge_edge(x, shift, xi, 0.9, 100) == 1, "a rigid translation never collides", 0, 0);
  const double still[4][3] = {{0}};
  check(pbng_accd_point_triangle(x, still, xi, 0.9, 100) == 1, "no motion: 1", 0, 0);
  check(pbng_accd_point_triangle(x, fall, 1.0, 0.9, 100) == 0 && pbng_accd_point_triangle(x, fall, 2.0, 0.9, 100) == 0, "starting within the thickness: 0", 0, 0);
  double bad[4][3] = {{0}};
  bad[2][1] = NAN;
  check(pbng_accd_point_triangle(x, bad, xi, 0.9, 100) == 0 && pbng_accd_edge_edge(x, bad, xi, 0.9, 100) == 0, "a NaN displacement: 0", 0, 0);
  const double one = pbng_accd_point_triangle(x, fall, xi, 0.9, 1);
  check(fabs(one - 0.9 * 0.9 / 2) < 1e-15, "one advance: s gap0 / l_p", one, 0.9 * 0.9 / 2);
  /* edges crossing head-on: a along x at z = 1 moving down, b along y at z = 0 */
  const double e[4][3] = {{-1, 0, 1}, {1, 0, 1}, {0, -1, 0}, {0, 1, 0}}, de[4][3] = {{0, 0, -4}, {0, 0, -4}, {0, 0, 0}, {0, 0, 0}};
  const double te = pbng_accd_edge_edge(e, de, 0.2, PBNG_ACCD_CONSERVATIVE, PBNG_ACCD_MAX_ITERATIONS);
  check(te <= 0.2 && fabs(te - PBNG_ACCD_CONSERVATIVE * 0.2) <= 1e-14, "edges head-on: t = s TOI", te, PBNG_ACCD_CONSERVATIVE * 0.2);
}

/* ---- a point passing through a moving triangle ---- */

/* Brute force: the orientation (x0 - x1).((x2 - x1) x (x3 - x1)) at m + 1 samples of the step; the first sample
 * interval in which it falls from > 0 to <= 0 with the point, at the interval's end, within `slack` of the plane's
 * triangle (its projection inside, widened by slack). Returns that interval's end, or -1. */
static double brute_force_crossing_in(const double x[4][3], const double dx[4][3], double t0, double t1, int m, double slack)
{
  double prev = 0;
  for (int i = 0; i <= m; ++i) {
    const double t = t0 + (t1 - t0) * i / m;
    double y[4][3], a[3], b[3], c[3], n[3];
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) y[j][k] = x[j][k] + t * dx[j][k];
    for (int k = 0; k < 3; ++k) a[k] = y[0][k] - y[1][k], b[k] = y[2][k] - y[1][k], c[k] = y[3][k] - y[1][k];
    n[0] = b[1] * c[2] - b[2] * c[1], n[1] = b[2] * c[0] - b[0] * c[2], n[2] = b[0] * c[1] - b[1] * c[0];
    const double g = dot(a, n), nn = norm(n);
    if (i > 0 && prev > 0 && g <= 0 && nn > 0) { /* barycentric coordinates of the projection, each edge's side */
      int inside = 1;
      for (int e = 0; e < 3 && inside; ++e) {
        const double *p = y[1 + e], *q = y[1 + (e + 1) % 3];
        double pq[3], px[3], cr[3];
        for (int k = 0; k < 3; ++k) pq[k] = q[k] - p[k], px[k] = y[0][k] - p[k];
        cr[0] = pq[1] * px[2] - pq[2] * px[1], cr[1] = pq[2] * px[0] - pq[0] * px[2], cr[2] = pq[0] * px[1] - pq[1] * px[0];
        inside = dot(cr, n) / nn >= -slack * norm(pq);
      }
      if (inside) return t;
    }
    prev = g;
  }
  return -1;
}

static double brute_force_crossing(const double x[4][3], const double dx[4][3], int m, double slack)
{
  return brute_force_crossing_in(x, dx, 0, 1, m, slack);
}

/* Whether the orientation falls from > 0 at t0 to <= 0 at t1 with the point then inside (slack). */
static int brute_force_crossing_between(const double x[4][3], const double dx[4][3], double t0, double t1, double slack)
{
  return brute_force_crossing_in(x, dx, t0, t1, 1, slack) >= 0;
}

/* Independently of the brute force: the orientation falls from > 0 (at t - 1e-9) to <= 0 (at t + 1e-12) and the point
 * is then within 1e-6 of an edge's length of the triangle. */
static int crossing_at(const double x[4][3], const double dx[4][3], double t)
{
  const double before = t - 1e-9, after = fmin(1.0, t + 1e-12);
  return brute_force_crossing_between(x, dx, fmax(0.0, before), after, 1e-6);
}

/* pbng_point_triangle_crossing against the brute force on random and aimed trajectories (front to back, back to
 * front, missing): every crossing it reports lies in a brute-force interval found with a slack, and every crossing
 * the brute force finds without slack it reports, at a time within one sample of it; closed-form cases. */
static void check_crossing(void)
{
  uint64_t s = 20261128;
  const int m = 4000;
  int found = 0, agreed = 0, cases = 4000;
  for (int c = 0; c < cases; ++c) {
    double x[4][3], dx[4][3], t = -1;
    (void)point_triangle_trajectory(&s, c % 2 ? AIMED : RANDOM, x, dx);
    const int hit = pbng_point_triangle_crossing(x, dx, &t);
    const double strict = brute_force_crossing(x, dx, m, -1e-6), loose = brute_force_crossing(x, dx, m, 1e-6);
    found += hit;
    if (hit) check(t >= 0 && t <= 1 && crossing_at(x, dx, t), "crossing: front to back inside the triangle at the time reported", t, 0);
    if (hit && loose >= 0) check(t <= loose + 1e-12, "crossing: the first one", t, loose);
    if (strict >= 0) check(hit && t <= strict + 1e-12, "crossing: one the brute force finds is reported", t, strict);
    agreed += hit == (loose >= 0);
  }
  printf("crossing: %d of %d trajectories cross front to back; the brute force (%d samples) agrees on %d\n", found, cases, m, agreed);
  check(found >= cases / 8, "crossing: enough crossing trajectories", found, cases / 8);
  const double tri[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  double x[4][3] = {{0.2, 0.2, 1}}, dx[4][3] = {{0, 0, -4}}, t = -1;
  for (int i = 1; i < 4; ++i)
    for (int k = 0; k < 3; ++k) x[i][k] = tri[i - 1][k];
  check(pbng_point_triangle_crossing(x, dx, &t) && fabs(t - 0.25) < 1e-14, "crossing: a fall through the plane at t = 1/4", t, 0.25);
  dx[0][2] = 4, x[0][2] = -1;
  check(!pbng_point_triangle_crossing(x, dx, &t), "crossing: back to front is not one", 0, 0);
  x[0][0] = 0.8, x[0][1] = 0.8, x[0][2] = 1, dx[0][2] = -4;
  check(!pbng_point_triangle_crossing(x, dx, &t), "crossing: beside the triangle is not one", 0, 0);
  x[0][0] = 0.2, x[0][1] = 0.2, x[0][2] = 0.5, dx[0][2] = 0;
  for (int i = 1; i < 4; ++i) dx[i][2] = 1; /* the triangle rises through the resting point: it passes to the back */
  check(pbng_point_triangle_crossing(x, dx, &t) && fabs(t - 0.5) < 1e-14, "crossing: a triangle rising through a resting point at t = 1/2", t, 0.5);
  for (int i = 1; i < 4; ++i) dx[i][2] = -1, x[i][2] = 1; /* falling onto it from above: back to front */
  check(!pbng_point_triangle_crossing(x, dx, &t), "crossing: a triangle whose back passes a point is not one", 0, 0);
}

int main(void)
{
  check_crossing();
  check_point_segment();
  check_segment_segment();
  check_accd_closed_forms();
  check_accd(POINT_TRIANGLE, PBNG_ACCD_CONSERVATIVE, 1000);
  check_accd(EDGE_EDGE, PBNG_ACCD_CONSERVATIVE, 1000);
  check_accd(POINT_TRIANGLE, 0.5, 250);
  check_accd(EDGE_EDGE, 0.99, 250);
  printf("test_ccd: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
