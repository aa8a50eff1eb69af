/* Contact geometry (src/core/contact_geometry.c): the closest point of a triangle against the
 * variational inequality of the projection on a convex set and against dense sampling (random,
 * degenerate and sliver triangles); triangle normals; the angle-weighted vertex normal; each obstacle
 * kind's signed distance, closest point and normal against brute force (the distance to each face
 * rectangle, sampling of the sphere) for points inside, outside, near edges and corners, on faces;
 * pbng_obstacle_parse on good specifications and on bad ones (each message naming the problem). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/contact_geometry.h"
#include "test_check.h"

#define PI 3.14159265358979323846

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double dist(const double a[3], const double b[3])
{
  double d2 = 0;
  for (int k = 0; k < 3; ++k) d2 += (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(d2);
}
static void random_point(uint64_t *s, double lo, double hi, double p[3])
{
  for (int k = 0; k < 3; ++k) p[k] = lo + (hi - lo) * next_random(s);
}

/* min over the barycentric lattice of step 1/m of |x - y| */
static double sampled_distance(const double x[3], const double *const c[3], int m)
{
  double best = INFINITY;
  for (int i = 0; i <= m; ++i)
    for (int j = 0; i + j <= m; ++j) {
      const double u = (double)i / m, v = (double)j / m, w = 1 - u - v;
      double y[3];
      for (int k = 0; k < 3; ++k) y[k] = w * c[0][k] + u * c[1][k] + v * c[2][k];
      best = fmin(best, dist(x, y));
    }
  return best;
}

static double longest_edge(const double *const c[3]) { return fmax(dist(c[0], c[1]), fmax(dist(c[1], c[2]), dist(c[2], c[0]))); }

/* One query: weights valid, p their point, the returned squared distance |x - p|^2, p the projection
 * on the convex triangle ((x - p).(y - p) <= 0 for each corner y), and no lattice sample closer. */
static void check_closest(const char *what, const double x[3], const double *const c[3])
{
  double w[3], p[3], q[3];
  char msg[128];
  const double d2 = pbng_point_triangle_closest(x, c[0], c[1], c[2], w, p);
  const double L = fmax(longest_edge(c), 1e-300), scale = L + dist(x, c[0]);
  snprintf(msg, sizeof(msg), "%s: weights non-negative, sum 1", what);
  check(w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && fabs(w[0] + w[1] + w[2] - 1) <= 1e-14, msg, w[0] + w[1] + w[2], 1);
  for (int k = 0; k < 3; ++k) q[k] = w[0] * c[0][k] + w[1] * c[1][k] + w[2] * c[2][k];
  snprintf(msg, sizeof(msg), "%s: p is the weights' point, the distance |x - p|^2", what);
  check(dist(p, q) <= 1e-14 * scale && fabs(d2 - dist(x, p) * dist(x, p)) <= 1e-14 * scale * scale, msg, d2, dist(x, p) * dist(x, p));
  double worst = -INFINITY;
  for (int a = 0; a < 3; ++a) {
    double r[3], y[3];
    for (int k = 0; k < 3; ++k) r[k] = x[k] - p[k], y[k] = c[a][k] - p[k];
    worst = fmax(worst, dot(r, y));
  }
  snprintf(msg, sizeof(msg), "%s: (x - p).(y - p) <= 0 for every corner y", what);
  check(worst <= 1e-12 * scale * scale, msg, worst, 0);
  const int m = 48;
  const double sampled = sampled_distance(x, c, m);
  snprintf(msg, sizeof(msg), "%s: no sample closer, none farther than the lattice step", what);
  check(sqrt(d2) <= sampled + 1e-13 * scale && sqrt(d2) >= sampled - L / m, msg, sqrt(d2), sampled);
}

static void check_closest_points(void)
{
  uint64_t s = 0x1234567ull;
  for (int t = 0; t < 300; ++t) { /* random triangles, points far and near (around the plane) */
    double a[3], b[3], c[3], x[3];
    random_point(&s, -1, 1, a), random_point(&s, -1, 1, b), random_point(&s, -1, 1, c);
    const double *cs[3] = {a, b, c};
    for (int q = 0; q < 6; ++q) {
      if (q < 3) random_point(&s, -2, 2, x);
      else {
        const double u = 1.4 * next_random(&s) - 0.2, v = 1.4 * next_random(&s) - 0.2, h = 0.2 * (next_random(&s) - 0.5);
        double n[3];
        pbng_triangle_normal(a, b, c, n);
        for (int k = 0; k < 3; ++k) x[k] = a[k] + u * (b[k] - a[k]) + v * (c[k] - a[k]) + h * n[k];
      }
      check_closest("random triangle", x, cs);
    }
  }
  for (int t = 0; t < 100; ++t) { /* degenerate: collinear, two coincident corners, a point; slivers */
    double a[3], b[3], c[3], x[3], mid[3], off[3];
    random_point(&s, -1, 1, a), random_point(&s, -1, 1, b), random_point(&s, -1, 1, off);
    const double tt = 2.0 * next_random(&s) - 0.5;
    const double *cs[3] = {a, b, c};
    for (int k = 0; k < 3; ++k) c[k] = a[k] + tt * (b[k] - a[k]), mid[k] = 0.5 * (a[k] + b[k]);
    random_point(&s, -2, 2, x);
    check_closest("collinear triangle", x, cs);
    memcpy(c, b, sizeof(c));
    check_closest("two corners coincide", x, cs);
    memcpy(b, a, sizeof(b)), memcpy(c, a, sizeof(c));
    check_closest("all corners coincide", x, cs);
    random_point(&s, -1, 1, b);
    for (int k = 0; k < 3; ++k) mid[k] = 0.5 * (a[k] + b[k]), c[k] = mid[k] + 1e-9 * off[k];
    check_closest("sliver triangle", x, cs);
    for (int k = 0; k < 3; ++k) x[k] = mid[k] + 1e-3 * off[k];
    check_closest("sliver triangle, point next to it", x, cs);
  }
  { /* regions of a known triangle: interior, edges, vertices */
    const double a[3] = {0, 0, 0}, b[3] = {2, 0, 0}, c[3] = {0, 2, 0}, x1[3] = {0.5, 0.5, 1}, x2[3] = {1, -1, 0.5}, x3[3] = {3, -1, 0};
    double w[3], p[3];
    check(fabs(pbng_point_triangle_closest(x1, a, b, c, w, p) - 1) < 1e-15 && fabs(w[1] - 0.25) < 1e-15 && fabs(w[2] - 0.25) < 1e-15,
          "interior: distance 1, weights (0.5, 0.25, 0.25)", w[1], 0.25);
    check(fabs(pbng_point_triangle_closest(x2, a, b, c, w, p) - 1.25) < 1e-15 && fabs(w[1] - 0.5) < 1e-15 && w[2] == 0,
          "edge ab: distance^2 1.25, weights (0.5, 0.5, 0)", w[1], 0.5);
    check(fabs(pbng_point_triangle_closest(x3, a, b, c, w, p) - 2) < 1e-15 && w[1] == 1, "vertex b: distance^2 2", w[1], 1);
  }
}

static void check_normals(void)
{
  uint64_t s = 99;
  for (int t = 0; t < 200; ++t) {
    double a[3], b[3], c[3], n[3], ab[3], ac[3];
    random_point(&s, -1, 1, a), random_point(&s, -1, 1, b), random_point(&s, -1, 1, c);
    const double len = pbng_triangle_normal(a, b, c, n);
    for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k];
    const double twice_area = sqrt(dot(ab, ab) * dot(ac, ac) - dot(ab, ac) * dot(ab, ac)); /* Lagrange's identity */
    const double det = n[0] * (ab[1] * ac[2] - ab[2] * ac[1]) - n[1] * (ab[0] * ac[2] - ab[2] * ac[0]) + n[2] * (ab[0] * ac[1] - ab[1] * ac[0]);
    check(fabs(len - twice_area) <= 1e-12 * (1 + twice_area), "normal: returns twice the area", len, twice_area);
    check(fabs(dot(n, n) - 1) < 1e-14 && fabs(dot(n, ab)) < 1e-14 && fabs(dot(n, ac)) < 1e-14, "normal: unit, orthogonal to the edges", dot(n, n), 1);
    check(det > 0, "normal: right-handed with the edges", det, 0);
  }
  const double a[3] = {1, 1, 1}, b[3] = {2, 2, 2}, c[3] = {3, 3, 3};
  double n[3] = {5, 5, 5};
  check(pbng_triangle_normal(a, b, c, n) == 0 && n[0] == 0 && n[1] == 0 && n[2] == 0, "degenerate triangle: zero normal, zero length", n[0], 0);
  /* a flat fan of 7 uneven triangles around v in the plane z = 0.3: n_v = 2 pi e_z */
  double nv[3] = {0, 0, 0}, ring[7][3];
  const double v[3] = {0.1, -0.2, 0.3};
  const double angle[7] = {0, 0.7, 1.1, 2.4, 3.0, 4.4, 5.5};
  for (int k = 0; k < 7; ++k) ring[k][0] = v[0] + (1 + 0.3 * k) * cos(angle[k]), ring[k][1] = v[1] + (1 + 0.3 * k) * sin(angle[k]), ring[k][2] = v[2];
  for (int k = 0; k < 7; ++k) pbng_vertex_normal_add(v, ring[k], ring[(k + 1) % 7], nv);
  check(fabs(nv[2] - 2 * PI) < 1e-13 && fabs(nv[0]) < 1e-14 && fabs(nv[1]) < 1e-14, "flat fan: vertex normal 2 pi e_z", nv[2], 2 * PI);
  /* the corner of a cube, its three faces' triangles from the corner: angles pi/2, normals -e_k */
  const double o[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
  double nc[3] = {0, 0, 0};
  pbng_vertex_normal_add(o, ey, ex, nc), pbng_vertex_normal_add(o, ez, ey, nc), pbng_vertex_normal_add(o, ex, ez, nc);
  check(fabs(nc[0] + PI / 2) < 1e-15 && fabs(nc[1] + PI / 2) < 1e-15 && fabs(nc[2] + PI / 2) < 1e-15, "cube corner: vertex normal -pi/2 (1,1,1)", nc[0],
        -PI / 2);
}

/* Two triangles sharing the edge (0,0,0)-(0,1,0), the second folded up (a valley of the free space above)
 * or down (a ridge) by an angle: a valley above the slope's angle, a ridge never, flat never; two
 * triangles facing each other across a gap are a valley, back to back are not. */
static void check_valleys(void)
{
  const double deg = PI / 180;
  const double angles[6] = {1, 2, 5, 20, 60, 120};
  for (int k = 0; k < 6; ++k)
    for (int up = 0; up < 2; ++up) {
      const double a = (up ? 1 : -1) * angles[k] * deg;
      const double t[3][3] = {{0, 0, 0}, {0, 1, 0}, {-1, 0, 0}};         /* in z = 0, normal e_y x -e_x = +z */
      const double u[3][3] = {{0, 0, 0}, {cos(a), 0, sin(a)}, {0, 1, 0}}; /* normal (-sin a, 0, cos a) */
      double nt[3], nu[3];
      pbng_triangle_normal(t[0], t[1], t[2], nt), pbng_triangle_normal(u[0], u[1], u[2], nu);
      check(nt[2] < 0 ? 0 : 1, "valley: the flat triangle's normal is +z", nt[2], 1);
      /* u's centroid height against its distance from t's centroid: the fold is a valley when both exceed the slope */
      const int expect = up && sin(angles[k] * deg / 2) > PBNG_VALLEY_SLOPE;
      char what[96];
      snprintf(what, sizeof(what), "valley: edge folded %s by %g degrees", up ? "up" : "down", angles[k]);
      check(pbng_triangles_form_valley(t, nt, u, nu) == expect && pbng_triangles_form_valley(u, nu, t, nt) == expect, what, angles[k], expect);
    }
  const double lo[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, hi[3][3] = {{0, 0, 0.1}, {0, 1, 0.1}, {1, 0, 0.1}};
  double nlo[3], nhi[3];
  pbng_triangle_normal(lo[0], lo[1], lo[2], nlo), pbng_triangle_normal(hi[0], hi[1], hi[2], nhi);
  check(pbng_triangles_form_valley(lo, nlo, hi, nhi), "valley: two triangles facing each other across a gap", nlo[2], 1);
  const double nlo2[3] = {-nlo[0], -nlo[1], -nlo[2]}, nhi2[3] = {-nhi[0], -nhi[1], -nhi[2]};
  check(!pbng_triangles_form_valley(lo, nlo2, hi, nhi2), "valley: back to back is none", nlo2[2], -1);
  /* a step: both facing +z, the second 0.5 higher and beside the first (in front of the first's plane,
   * the first behind the second's): no valley in either order */
  const double step[3][3] = {{1, 0, 0.5}, {2, 0, 0.5}, {1, 1, 0.5}};
  double nstep[3];
  pbng_triangle_normal(step[0], step[1], step[2], nstep);
  check(!pbng_triangles_form_valley(lo, nlo, step, nstep) && !pbng_triangles_form_valley(step, nstep, lo, nlo), "valley: a step is none (either order)",
        nstep[2], 1);
}

/* Brute-force distance from x to the surface of box [lo, hi]: the nearest of its six face rectangles
 * (each by clamping x onto it). */
static double box_surface_distance(const double lo[3], const double hi[3], const double x[3])
{
  double best = INFINITY;
  for (int f = 0; f < 6; ++f) {
    const int k = f / 2;
    double y[3];
    for (int j = 0; j < 3; ++j) y[j] = fmin(fmax(x[j], lo[j]), hi[j]);
    y[k] = f % 2 ? hi[k] : lo[k];
    best = fmin(best, dist(x, y));
  }
  return best;
}

static int inside_box(const double lo[3], const double hi[3], const double x[3])
{
  return x[0] >= lo[0] && x[0] <= hi[0] && x[1] >= lo[1] && x[1] <= hi[1] && x[2] >= lo[2] && x[2] <= hi[2];
}

/* What every obstacle answer satisfies: n unit, x = q + phi n, and |phi| the brute-force distance
 * with the sign of the allowed side. */
static void check_obstacle_answer(const char *what, const pbng_obstacle *o, const double x[3], double brute, double tol)
{
  double q[3], n[3], y[3];
  char msg[128];
  const double phi = pbng_obstacle_closest(o, x, q, n);
  for (int k = 0; k < 3; ++k) y[k] = q[k] + phi * n[k];
  snprintf(msg, sizeof(msg), "%s: unit normal, x = q + phi n", what);
  check(fabs(dot(n, n) - 1) < 1e-14 && dist(x, y) <= 1e-13 * (1 + fabs(phi)), msg, dist(x, y), 0);
  snprintf(msg, sizeof(msg), "%s: signed distance against brute force", what);
  check(fabs(phi - brute) <= tol, msg, phi, brute);
}

static void check_box_obstacles(void)
{
  uint64_t s = 7;
  const double lo[3] = {-1, 0, 0.5}, hi[3] = {1, 0.5, 2};
  pbng_obstacle box = {PBNG_OBSTACLE_BOX, {-1, 0, 0.5, 1, 0.5, 2}}, con = {PBNG_OBSTACLE_CONTAINER, {-1, 0, 0.5, 1, 0.5, 2}};
  for (int t = 0; t < 3000; ++t) {
    double x[3], q[3], n[3];
    if (t < 1000) random_point(&s, -2, 3, x); /* inside and outside */
    else if (t < 2000) { /* near an edge or a corner */
      for (int k = 0; k < 3; ++k) x[k] = (next_random(&s) < 0.5 ? lo[k] : hi[k]) + 0.05 * (next_random(&s) - 0.5);
      if (t % 3 == 0) x[t % 9 / 3] = lo[t % 9 / 3] + (hi[t % 9 / 3] - lo[t % 9 / 3]) * next_random(&s); /* an edge: one free axis */
    } else { /* on a face */
      for (int k = 0; k < 3; ++k) x[k] = lo[k] + (hi[k] - lo[k]) * next_random(&s);
      x[t % 3] = t % 2 ? hi[t % 3] : lo[t % 3];
    }
    const double d = box_surface_distance(lo, hi, x);
    const int in = inside_box(lo, hi, x);
    check_obstacle_answer("solid box", &box, x, in ? -d : d, 1e-14);
    check_obstacle_answer("container", &con, x, in ? d : -d, 1e-14);
    const double phi = pbng_obstacle_closest(&box, x, q, n);
    check(inside_box(lo, hi, q) && box_surface_distance(lo, hi, q) < 1e-15, "solid box: q on the surface", box_surface_distance(lo, hi, q), 0);
    if (!in) check(phi > 0 && dot(n, (double[3]){x[0] - q[0], x[1] - q[1], x[2] - q[2]}) > 0, "solid box outside: n points away from it", phi, 0);
  }
  double q[3], n[3];
  const double centre[3] = {0, 0.25, 1.25}, face_point[3] = {1, 0.25, 1.25};
  check(pbng_obstacle_closest(&box, centre, q, n) == -0.25 && n[1] == -1, "solid box centre: nearest face -y (ties: first)", n[1], -1);
  check(pbng_obstacle_closest(&box, face_point, q, n) == 0 && n[0] == 1, "on the +x face: phi 0, normal +x", n[0], 1);
  check(pbng_obstacle_closest(&con, face_point, q, n) == 0 && n[0] == -1, "container, on the +x face: phi 0, normal -x (inward)", n[0], -1);
}

static void check_round_obstacles(void)
{
  uint64_t s = 11;
  pbng_obstacle ball = {PBNG_OBSTACLE_SPHERE, {0.2, -0.1, 0.3, 0.7, 0, 0}};
  pbng_obstacle plane;
  const char *msg = pbng_obstacle_parse("plane:0.1,0.2,0.3,1,-2,2", &plane);
  check(msg == NULL, "plane parses", 0, 0);
  enum { NS = 20000 };
  static double sphere[NS][3];
  for (int i = 0; i < NS; ++i) { /* Fibonacci sphere */
    const double z = 1 - 2 * (i + 0.5) / NS, r = sqrt(1 - z * z), phi = i * PI * (3 - sqrt(5.0));
    sphere[i][0] = 0.2 + 0.7 * r * cos(phi), sphere[i][1] = -0.1 + 0.7 * r * sin(phi), sphere[i][2] = 0.3 + 0.7 * z;
  }
  for (int t = 0; t < 400; ++t) {
    double x[3];
    random_point(&s, -1.5, 1.5, x);
    double best = INFINITY;
    for (int i = 0; i < NS; ++i) best = fmin(best, dist(x, sphere[i]));
    const double r = dist(x, ball.p);
    check_obstacle_answer("sphere", &ball, x, r < 0.7 ? -best : best, 0.02);
    /* plane: the distance along the normal normalised by hand, (1, -2, 2) / 3 */
    const double n[3] = {1 / 3.0, -2 / 3.0, 2 / 3.0}, p0[3] = {0.1, 0.2, 0.3};
    double foot[3], d0 = 0;
    for (int k = 0; k < 3; ++k) d0 += (x[k] - p0[k]) * n[k];
    for (int k = 0; k < 3; ++k) foot[k] = x[k] - d0 * n[k];
    check_obstacle_answer("plane", &plane, x, d0, 1e-14);
    double q[3], nq[3];
    pbng_obstacle_closest(&plane, x, q, nq);
    check(dist(q, foot) < 1e-14, "plane: q is the foot of x", dist(q, foot), 0);
  }
  double q[3], n[3];
  check(pbng_obstacle_closest(&ball, ball.p, q, n) == -0.7 && n[2] == 1, "sphere centre: phi -r, n +z", n[2], 1);
}

static void check_parse(void)
{
  pbng_obstacle o;
  const char *msg = pbng_obstacle_parse("plane:0,0,1, 0,0,2", &o);
  check(!msg && o.kind == PBNG_OBSTACLE_PLANE && o.p[5] == 1 && o.p[2] == 1, "plane: normal normalised", o.p[5], 1);
  msg = pbng_obstacle_parse("  box : -1 , 0,0 ,1,1 ,1e0 ", &o);
  check(!msg && o.kind == PBNG_OBSTACLE_BOX && o.p[0] == -1 && o.p[5] == 1, "box with spaces around the kind and numbers", o.p[0], -1);
  msg = pbng_obstacle_parse("container:-2,-2,-2,2,2,2", &o);
  check(!msg && o.kind == PBNG_OBSTACLE_CONTAINER && o.p[3] == 2, "container", o.p[3], 2);
  msg = pbng_obstacle_parse("sphere:1,2,3,0.5", &o);
  check(!msg && o.kind == PBNG_OBSTACLE_SPHERE && o.p[3] == 0.5 && o.p[2] == 3, "sphere", o.p[3], 0.5);
  static const struct {
    const char *spec, *expect;
  } bad[] = {
    {"", "empty"},
    {"   ", "empty"},
    {"plane", "expected kind:values"},
    {"cylinder:0,0,0,1", "unknown kind"},
    {":1,2,3", "unknown kind"},
    {"plane:1,2,3", "plane: expected 6 values"},
    {"plane:1,2,3,4,5,6,7", "plane: expected 6 values"},
    {"sphere:1,2,3", "sphere: expected 4 values"},
    {"box:0,0,0,1,1", "box: expected 6 values"},
    {"sphere:1,2,x,4", "value 3 is not a number"},
    {"sphere:1,2,3,4abc", "value 4 is not a number"},
    {"plane:1,2,3,4,5,", "value 6 is not a number"},
    {"box:0,,0,1,1,1", "value 2 is not a number"},
    {"box:0,0,0,1,inf,1", "value 5 is not finite"},
    {"box:0,0,nan,1,1,1", "value 3 is not finite"},
    {"plane:0,0,0,0,0,0", "plane: the normal nx,ny,nz is zero"},
    {"box:0,0,0,1,0,1", "box: ly must be below hy"},
    {"container:2,0,0,1,1,1", "container: lx must be below hx"},
    {"box:0,0,1,1,1,1", "box: lz must be below hz"},
    {"sphere:0,0,0,0", "sphere: the radius must be positive"},
    {"sphere:0,0,0,-1", "sphere: the radius must be positive"},
  };
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
    pbng_obstacle before = {PBNG_OBSTACLE_SPHERE, {9, 9, 9, 9, 9, 9}}, after = before;
    msg = pbng_obstacle_parse(bad[k].spec, &after);
    char what[160];
    snprintf(what, sizeof(what), "'%s' refused with '%s' (got '%s'), the obstacle unchanged", bad[k].spec, bad[k].expect, msg ? msg : "(null)");
    check(msg && strstr(msg, bad[k].expect) && !memcmp(&before, &after, sizeof(before)), what, 0, 0);
  }
}

int main(void)
{
  check_closest_points();
  check_normals();
  check_valleys();
  check_box_obstacles();
  check_round_obstacles();
  check_parse();
  printf("test_contact_geometry: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
