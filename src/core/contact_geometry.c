#include "core/contact_geometry.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/vec3.h"

/* p = w0 a + w1 b + w2 c; returns |p - x|^2. */
static double weighted_point(const double x[3], const double a[3], const double b[3], const double c[3], const double w[3], double p[3])
{
  double dist2 = 0;
  for (int k = 0; k < 3; ++k) {
    p[k] = w[0] * a[k] + w[1] * b[k] + w[2] * c[k];
    const double d = p[k] - x[k];
    dist2 += d * d;
  }
  return dist2;
}

/* Ericson's region tests (Real-Time Collision Detection, 5.1.5): the weights of the closest point of
 * (a, b, c) to x. Returns 1 when they are usable (finite, in [0, 1]); rounding can break that for
 * near-degenerate triangles, whose callers then take closest_of_edges_and_plane. */
static int region_weights(const double x[3], const double a[3], const double b[3], const double c[3], double bc[3])
{
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  vec3_sub(b, a, ab), vec3_sub(c, a, ac), vec3_sub(x, a, ap), vec3_sub(x, b, bp), vec3_sub(x, c, cp);
  const double d1 = vec3_dot(ab, ap), d2 = vec3_dot(ac, ap), d3 = vec3_dot(ab, bp), d4 = vec3_dot(ac, bp), d5 = vec3_dot(ab, cp), d6 = vec3_dot(ac, cp);
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
  bc[0] = u, bc[1] = v, bc[2] = w;
  return u >= 0 && v >= 0 && w >= 0 && u <= 1 && v <= 1 && w <= 1; /* false for NaN too */
}

/* Whether the region tests can be trusted: twice the area above 1e-3 times the longest edge squared
 * (the rounding of their products is then far below the area's). */
static int well_shaped(const double a[3], const double b[3], const double c[3])
{
  double ab[3], ac[3], bc[3], n[3];
  vec3_sub(b, a, ab), vec3_sub(c, a, ac), vec3_sub(c, b, bc);
  vec3_cross(ab, ac, n);
  const double longest2 = fmax(vec3_dot(ab, ab), fmax(vec3_dot(ac, ac), vec3_dot(bc, bc)));
  return vec3_dot(n, n) > 1e-6 * longest2 * longest2;
}

/* The weights of the projection of x on the plane of (a, b, c) from the normal n = ab x ac:
 * w1 = n.(ap x ac) / |n|^2, w2 = n.(ab x ap) / |n|^2. Returns 1 when it lies in the closed triangle. */
static int projection_weights(const double x[3], const double a[3], const double b[3], const double c[3], double w[3])
{
  double ab[3], ac[3], ap[3], n[3], t[3];
  vec3_sub(b, a, ab), vec3_sub(c, a, ac), vec3_sub(x, a, ap);
  vec3_cross(ab, ac, n);
  const double nn = vec3_dot(n, n);
  if (!(nn > 0)) return 0;
  vec3_cross(ap, ac, t);
  w[1] = vec3_dot(n, t) / nn;
  vec3_cross(ab, ap, t);
  w[2] = vec3_dot(n, t) / nn;
  w[0] = 1 - w[1] - w[2];
  return w[0] >= 0 && w[1] >= 0 && w[2] >= 0;
}

/* The parameter t in [0, 1] of the closest point (1 - t) p + t q of segment [p, q] to x (0 for a
 * segment of zero length). */
static double segment_parameter(const double x[3], const double p[3], const double q[3])
{
  double pq[3], px[3];
  vec3_sub(q, p, pq), vec3_sub(x, p, px);
  const double L2 = vec3_dot(pq, pq);
  if (!(L2 > 0)) return 0;
  return fmin(fmax(vec3_dot(px, pq) / L2, 0.0), 1.0);
}

/* The closest point as the nearest of: the plane projection when it falls inside, and each edge's
 * closest point (ab, bc, ca; ties: the first). Exact for any triangle, degenerate ones included. */
static double closest_of_edges_and_plane(const double x[3], const double a[3], const double b[3], const double c[3], double w[3], double p[3])
{
  const double *corner[3] = {a, b, c};
  double best = INFINITY, wc[3], pc[3];
  if (projection_weights(x, a, b, c, wc)) {
    best = weighted_point(x, a, b, c, wc, p);
    memcpy(w, wc, sizeof(wc));
  }
  for (int e = 0; e < 3; ++e) {
    const int i = e, j = (e + 1) % 3;
    const double t = segment_parameter(x, corner[i], corner[j]);
    wc[0] = wc[1] = wc[2] = 0;
    wc[i] = 1 - t, wc[j] = t;
    const double d2 = weighted_point(x, a, b, c, wc, pc);
    if (d2 < best || !(best == best)) {
      best = d2;
      memcpy(w, wc, sizeof(wc));
      memcpy(p, pc, sizeof(pc));
    }
  }
  return best;
}

double pbng_point_triangle_closest(const double x[3], const double a[3], const double b[3], const double c[3], double w[3], double p[3])
{
  if (well_shaped(a, b, c) && region_weights(x, a, b, c, w)) return weighted_point(x, a, b, c, w, p);
  return closest_of_edges_and_plane(x, a, b, c, w, p);
}

double pbng_triangle_normal(const double a[3], const double b[3], const double c[3], double n[3])
{
  double ab[3], ac[3];
  vec3_sub(b, a, ab), vec3_sub(c, a, ac);
  vec3_cross(ab, ac, n);
  const double len = sqrt(vec3_dot(n, n));
  for (int k = 0; k < 3; ++k) n[k] = len > 0 ? n[k] / len : 0.0;
  return len;
}

void pbng_vertex_normal_add(const double v[3], const double a[3], const double b[3], double nv[3])
{
  double e1[3], e2[3], n[3];
  const double len = pbng_triangle_normal(v, a, b, n);
  if (!(len > 0)) return;
  vec3_sub(a, v, e1), vec3_sub(b, v, e2);
  const double angle = atan2(len, vec3_dot(e1, e2)); /* |e1 x e2| = len */
  for (int k = 0; k < 3; ++k) nv[k] += angle * n[k];
}

static void centroid(const double t[3][3], double c[3])
{
  for (int k = 0; k < 3; ++k) c[k] = (t[0][k] + t[1][k] + t[2][k]) / 3.0;
}

int pbng_triangles_form_valley(const double t[3][3], const double n_t[3], const double u[3][3], const double n_u[3])
{
  double ct[3], cu[3], tu[3];
  centroid(t, ct), centroid(u, cu);
  vec3_sub(ct, cu, tu);
  const double len = sqrt(vec3_dot(tu, tu));
  return vec3_dot(tu, n_u) > PBNG_VALLEY_SLOPE * len && -vec3_dot(tu, n_t) > PBNG_VALLEY_SLOPE * len;
}

/* ---- obstacles ---- */

/* Plane through p[0..2] with unit normal p[3..5]: phi = (x - p).n, q = x - phi n. */
static double plane_closest(const double *o, const double x[3], double q[3], double n[3])
{
  double d[3];
  vec3_sub(x, o, d);
  const double phi = vec3_dot(d, &o[3]);
  for (int k = 0; k < 3; ++k) n[k] = o[3 + k], q[k] = x[k] - phi * n[k];
  return phi;
}

/* A point in the closed box [lo, hi]: its nearest face (ties: the first of -x, +x, -y, +y, -z, +z),
 * q the projection on it, `out` the face's outward normal; returns the distance to it. */
static double nearest_box_face(const double lo[3], const double hi[3], const double x[3], double q[3], double out[3])
{
  double best = INFINITY;
  int face = 0;
  for (int f = 0; f < 6; ++f) {
    const int k = f / 2;
    const double dist = f % 2 ? hi[k] - x[k] : x[k] - lo[k];
    if (dist < best) best = dist, face = f;
  }
  const int k = face / 2;
  for (int j = 0; j < 3; ++j) q[j] = x[j], out[j] = 0;
  q[k] = face % 2 ? hi[k] : lo[k];
  out[k] = face % 2 ? 1.0 : -1.0;
  return best;
}

/* Box [lo, hi] = o[0..5]; solid (outside allowed, sign +1) or container (inside allowed, sign -1).
 * Outside the closed box: q = x clamped to it, at distance r along u = (x - q) / r; inside: the
 * nearest face. phi is the distance signed positive on the allowed side, n points into that side. */
static double box_closest(const double *o, double sign, const double x[3], double q[3], double n[3])
{
  const double *lo = o, *hi = &o[3];
  double d[3], r = 0;
  for (int k = 0; k < 3; ++k) q[k] = fmin(fmax(x[k], lo[k]), hi[k]), d[k] = x[k] - q[k], r += d[k] * d[k];
  if (r > 0) {
    r = sqrt(r);
    for (int k = 0; k < 3; ++k) n[k] = sign * d[k] / r;
    return sign * r;
  }
  double out[3];
  const double dist = nearest_box_face(lo, hi, x, q, out);
  for (int k = 0; k < 3; ++k) n[k] = sign * out[k];
  return -sign * dist;
}

/* Ball of centre o[0..2] and radius o[3]: phi = |x - c| - r along u = (x - c) / |x - c| (+z at c). */
static double sphere_closest(const double *o, const double x[3], double q[3], double n[3])
{
  double d[3];
  vec3_sub(x, o, d);
  const double len = sqrt(vec3_dot(d, d));
  for (int k = 0; k < 3; ++k) n[k] = len > 0 ? d[k] / len : (k == 2 ? 1.0 : 0.0);
  for (int k = 0; k < 3; ++k) q[k] = o[k] + o[3] * n[k];
  return len - o[3];
}

double pbng_obstacle_closest(const pbng_obstacle *o, const double x[3], double q[3], double n[3])
{
  switch (o->kind) {
  case PBNG_OBSTACLE_PLANE: return plane_closest(o->p, x, q, n);
  case PBNG_OBSTACLE_BOX: return box_closest(o->p, 1.0, x, q, n);
  case PBNG_OBSTACLE_CONTAINER: return box_closest(o->p, -1.0, x, q, n);
  case PBNG_OBSTACLE_SPHERE: return sphere_closest(o->p, x, q, n);
  default: break;
  }
  for (int k = 0; k < 3; ++k) q[k] = x[k], n[k] = 0;
  return NAN;
}

/* ---- parsing ---- */

typedef struct {
  const char *name;
  pbng_obstacle_kind kind;
  int nvalues;
  const char *count_message;
} obstacle_form;

static const obstacle_form forms[PBNG_OBSTACLE_KIND_COUNT] = {
  {"plane", PBNG_OBSTACLE_PLANE, 6, "plane: expected 6 values px,py,pz,nx,ny,nz"},
  {"box", PBNG_OBSTACLE_BOX, 6, "box: expected 6 values lx,ly,lz,hx,hy,hz"},
  {"container", PBNG_OBSTACLE_CONTAINER, 6, "container: expected 6 values lx,ly,lz,hx,hy,hz"},
  {"sphere", PBNG_OBSTACLE_SPHERE, 4, "sphere: expected 4 values cx,cy,cz,r"},
};

static const char *const not_a_number[6] = {"obstacle: value 1 is not a number", "obstacle: value 2 is not a number",
                                            "obstacle: value 3 is not a number", "obstacle: value 4 is not a number",
                                            "obstacle: value 5 is not a number", "obstacle: value 6 is not a number"};
static const char *const not_finite[6] = {"obstacle: value 1 is not finite", "obstacle: value 2 is not finite", "obstacle: value 3 is not finite",
                                          "obstacle: value 4 is not finite", "obstacle: value 5 is not finite", "obstacle: value 6 is not finite"};
static const char *const lo_not_below_hi[2][3] = {
  {"box: lx must be below hx", "box: ly must be below hy", "box: lz must be below hz"},
  {"container: lx must be below hx", "container: ly must be below hy", "container: lz must be below hz"}};

static const char *skip_spaces(const char *s)
{
  while (*s && isspace((unsigned char)*s)) ++s;
  return s;
}

/* The form named by spec's text before the colon (spaces around it allowed), or NULL. */
static const obstacle_form *find_form(const char *spec, const char *colon)
{
  const char *s = skip_spaces(spec), *e = colon;
  while (e > s && isspace((unsigned char)e[-1])) --e;
  for (int k = 0; k < PBNG_OBSTACLE_KIND_COUNT; ++k)
    if (strlen(forms[k].name) == (size_t)(e - s) && !strncmp(s, forms[k].name, (size_t)(e - s))) return &forms[k];
  return NULL;
}

/* The comma-separated numbers of `form` (spaces around each allowed) into v: their count in *n, or a
 * message (which value is not a number; more values than the form takes). */
static const char *parse_values(const char *s, const obstacle_form *form, double *v, int *n)
{
  *n = 0;
  for (;;) {
    char *end;
    if (*n == form->nvalues) return form->count_message;
    v[*n] = strtod(s, &end);
    if (end == s) return not_a_number[*n];
    end = (char *)skip_spaces(end);
    if (*end != ',' && *end) return not_a_number[*n];
    ++*n;
    if (!*end) return NULL;
    s = end + 1;
  }
}

/* The kind's own conditions on finite values (normalises the plane's normal). */
static const char *check_values(pbng_obstacle_kind kind, double *v)
{
  if (kind == PBNG_OBSTACLE_PLANE) {
    const double len = sqrt(vec3_dot(&v[3], &v[3]));
    if (!(len > 0) || !isfinite(len)) return "plane: the normal nx,ny,nz is zero";
    for (int k = 3; k < 6; ++k) v[k] /= len;
  } else if (kind == PBNG_OBSTACLE_SPHERE) {
    if (!(v[3] > 0)) return "sphere: the radius must be positive";
  } else {
    for (int k = 0; k < 3; ++k)
      if (!(v[k] < v[3 + k])) return lo_not_below_hi[kind == PBNG_OBSTACLE_CONTAINER][k];
  }
  return NULL;
}

const char *pbng_obstacle_parse(const char *spec, pbng_obstacle *o)
{
  double v[6] = {0, 0, 0, 0, 0, 0};
  int n;
  if (!spec || !*skip_spaces(spec)) return "obstacle: empty specification (expected kind:values)";
  const char *colon = strchr(spec, ':');
  if (!colon) return "obstacle: expected kind:values, the kind one of plane, box, container, sphere";
  const obstacle_form *form = find_form(spec, colon);
  if (!form) return "obstacle: unknown kind (expected plane, box, container or sphere)";
  const char *msg = parse_values(colon + 1, form, v, &n);
  if (msg) return msg;
  if (n != form->nvalues) return form->count_message;
  for (int k = 0; k < n; ++k)
    if (!isfinite(v[k])) return not_finite[k];
  if ((msg = check_values(form->kind, v))) return msg;
  o->kind = form->kind;
  for (int k = 0; k < 6; ++k) o->p[k] = v[k];
  return NULL;
}
