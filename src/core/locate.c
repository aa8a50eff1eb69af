#include "core/locate.h"
#include <math.h>
#include "core/contact_geometry.h"
#include "core/element.h"
#include "core/mat3.h"
#include "core/vec3.h"

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

/* ---- Every element kind ---------------------------------------------------------------------- */

#define REFERENCE_INSIDE_TOL 1e-12 /* inside: converged reference coordinates this close to the reference element */
#define EXTRAPOLATE_MAX 0.25       /* outside: shape functions extrapolated up to this far from the reference element */
#define NODE_MATCH_TOL 1e-13       /* a point this close to a node (times the longest edge) is that node */
#define NEWTON_STEPS 50
#define NEWTON_BOX 3.0             /* Newton's iterates stay within [-NEWTON_BOX, NEWTON_BOX]^3 */
#define PYRAMID_APEX_GAP 1e-10     /* ... and a pyramid's this far below its apex (N_a has 1 - t in a denominator) */

/* |a - b|^2 */
static double distance2(const double a[3], const double b[3])
{
  return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}

double pbng_element_longest_edge(const pbng_element_type *t, const double (*X)[3])
{
  double h2 = 0;
  if (t->shape == PBNG_SHAPE_TRIANGLE) /* a sheet triangle has no faces: its three sides */
    for (int a = 0; a < 3; ++a) h2 = fmax(h2, distance2(X[a], X[(a + 1) % 3]));
  for (int f = 0; f < t->nfaces; ++f) {
    const pbng_element_face *face = &t->faces[f];
    for (int c = 0; c < face->corners; ++c) {
      const double *a = X[face->node[c]], *b = X[face->node[(c + 1) % face->corners]];
      double d2 = 0;
      for (int k = 0; k < 3; ++k) d2 += (a[k] - b[k]) * (a[k] - b[k]);
      if (d2 > h2) h2 = d2;
    }
  }
  return sqrt(h2);
}

/* The reference elements split into tetrahedra of their corners (the hexahedron: the 5-tetrahedron
 * split of src/mesh/generate.c in Gmsh's corner numbering; the prism: the staircase split). */
static const int tet_split[1][4] = {{0, 1, 2, 3}};
static const int hex_split[5][4] = {{0, 2, 7, 5}, {1, 0, 5, 2}, {3, 0, 2, 7}, {4, 0, 7, 5}, {6, 2, 5, 7}};
static const int prism_split[3][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}};
static const int pyramid_split[2][4] = {{0, 1, 2, 4}, {0, 2, 3, 4}};

double pbng_reference_closest_point(const pbng_element_type *t, const double r[3], double rc[3])
{
  const int(*split)[4] = t->shape == PBNG_SHAPE_HEXAHEDRON ? hex_split
                         : t->shape == PBNG_SHAPE_PRISM    ? prism_split
                         : t->shape == PBNG_SHAPE_PYRAMID  ? pyramid_split
                                                           : tet_split;
  const int n = t->shape == PBNG_SHAPE_HEXAHEDRON ? 5 : t->shape == PBNG_SHAPE_PRISM ? 3 : t->shape == PBNG_SHAPE_PYRAMID ? 2 : 1;
  double best = INFINITY;
  for (int s = 0; s < n && best > 0; ++s) {
    const double *V[4] = {t->ref_nodes[split[s][0]], t->ref_nodes[split[s][1]], t->ref_nodes[split[s][2]], t->ref_nodes[split[s][3]]};
    double wc[4];
    const double d = pbng_point_tet_distance(V, r, wc);
    if (d >= best) continue;
    best = d;
    for (int k = 0; k < 3; ++k) rc[k] = wc[0] * V[0][k] + wc[1] * V[1][k] + wc[2] * V[2][k] + wc[3] * V[3][k];
  }
  return best;
}

/* x(r) = sum_a N_a(r) X_a, its Jacobian J_ij = dx_i/dr_j and the shape functions N. */
static void element_map(const pbng_element_type *t, const double (*X)[3], const double r[3], double *N, double x[3], double J[9])
{
  double dN[PBNG_MAX_ELEMENT_NODES][3];
  pbng_element_shape(t, r, N, dN);
  for (int i = 0; i < 3; ++i) {
    x[i] = 0;
    for (int j = 0; j < 3; ++j) J[3 * i + j] = 0;
  }
  for (int a = 0; a < t->nodes; ++a)
    for (int i = 0; i < 3; ++i) {
      x[i] += N[a] * X[a][i];
      for (int j = 0; j < 3; ++j) J[3 * i + j] += X[a][i] * dN[a][j];
    }
}

/* |x(r) - q|, with x and J at r. */
static double map_residual(const pbng_element_type *t, const double (*X)[3], const double q[3], const double r[3], double res[3], double J[9])
{
  double N[PBNG_MAX_ELEMENT_NODES], x[3];
  element_map(t, X, r, N, x, J);
  for (int k = 0; k < 3; ++k) res[k] = x[k] - q[k];
  return sqrt(res[0] * res[0] + res[1] * res[1] + res[2] * res[2]);
}

/* Keeps a reference point where the basis may be evaluated (Newton's iterates, closest points). */
static void keep_evaluable(const pbng_element_type *t, double r[3])
{
  for (int k = 0; k < 3; ++k) r[k] = fmin(fmax(r[k], -NEWTON_BOX), NEWTON_BOX);
  if (t->shape == PBNG_SHAPE_PYRAMID) r[2] = fmin(r[2], 1.0 - PYRAMID_APEX_GAP);
}

int pbng_element_reference_coordinates(const pbng_element_type *t, const double (*X)[3], const double q[3], double r[3])
{
  const int corners = pbng_element_corner_type(t)->nodes;
  const double h = pbng_element_longest_edge(t, X);
  double res[3], J[9];

  for (int k = 0; k < 3; ++k) { /* the reference centroid of the corners */
    r[k] = 0;
    for (int a = 0; a < corners; ++a) r[k] += t->ref_nodes[a][k] / corners;
  }
  double norm = map_residual(t, X, q, r, res, J);
  for (int it = 0; it < NEWTON_STEPS && norm > 0; ++it) {
    double Jinv[9], dr[3], trial[3], tres[3], tJ[9], tnorm = norm, step = 1.0;
    if (!(fabs(mat3_inverse(J, Jinv)) > 0)) break; /* singular map: give up */
    mat3_vec(Jinv, res, dr);
    const double size = fmax(fabs(dr[0]), fmax(fabs(dr[1]), fabs(dr[2])));
    if (!isfinite(size)) break;
    for (int halving = 0; halving <= 8; ++halving, step *= 0.5) { /* accept a decrease, or a step too small to judge */
      for (int k = 0; k < 3; ++k) trial[k] = r[k] - step * dr[k];
      keep_evaluable(t, trial);
      tnorm = map_residual(t, X, q, trial, tres, tJ);
      if (tnorm < norm || step * size <= 1e-10) break;
    }
    double moved = 0;
    for (int k = 0; k < 3; ++k) moved = fmax(moved, fabs(trial[k] - r[k])), r[k] = trial[k], res[k] = tres[k];
    for (int k = 0; k < 9; ++k) J[k] = tJ[k];
    norm = tnorm;
    if (moved <= 1e-14) break; /* converged to round-off, or stuck */
  }
  return norm <= 1e-10 * h ? 0 : -1;
}

/* The node q coincides with (within NODE_MATCH_TOL times the longest edge h), or -1. */
static int coinciding_node(const pbng_element_type *t, const double (*X)[3], const double q[3], double h)
{
  for (int a = 0; a < t->nodes; ++a)
    if (fabs(X[a][0] - q[0]) <= NODE_MATCH_TOL * h && fabs(X[a][1] - q[1]) <= NODE_MATCH_TOL * h && fabs(X[a][2] - q[2]) <= NODE_MATCH_TOL * h) return a;
  return -1;
}

int pbng_tri_barycentric(const double *const X[3], const double q[3], double w[3])
{
  double e1[3], e2[3], d[3], n[3], c[3];
  for (int k = 0; k < 3; ++k) e1[k] = X[1][k] - X[0][k], e2[k] = X[2][k] - X[0][k], d[k] = q[k] - X[0][k];
  vec3_cross(e1, e2, n);
  const double nn = vec3_dot(n, n);
  if (!(nn > 0) || !isfinite(nn)) return -1;
  vec3_cross(d, e2, c);
  w[1] = vec3_dot(c, n) / nn; /* the projection p - X0 = w1 e1 + w2 e2 + t n: (d x e2).n = w1 |n|^2 */
  vec3_cross(e1, d, c);
  w[2] = vec3_dot(c, n) / nn;
  w[0] = 1.0 - w[1] - w[2];
  return 0;
}

/* tri3 (a sheet triangle in 3-D): the barycentric coordinates of q's projection onto the triangle's
 * plane, extrapolated as tet4_point_weights does; the distance to the closed triangle in 3-D. */
static double tri3_point_weights(const double (*X)[3], const double q[3], double w[3])
{
  const double *V[3] = {X[0], X[1], X[2]};
  double wc[3], p[3], wl[3];
  if (pbng_tri_barycentric(V, q, wl) != 0) return -1;
  const double distance = sqrt(pbng_point_triangle_closest(q, X[0], X[1], X[2], wc, p));
  const int wild = wl[0] < -0.5 || wl[1] < -0.5 || wl[2] < -0.5;
  for (int a = 0; a < 3; ++a) w[a] = wild ? wc[a] : wl[a];
  return distance;
}

int pbng_element_contains_point(const pbng_element_type *t, const double (*X)[3], const double q[3])
{
  double r[3], rc[3], w[4];
  if (t->kind == PBNG_ELEMENT_TRI3) { /* within round-off of the closed triangle (a plane has no inside) */
    const double d = tri3_point_weights(X, q, w);
    return d >= 0 && d <= REFERENCE_INSIDE_TOL * pbng_element_longest_edge(t, X);
  }
  if (t->kind == PBNG_ELEMENT_TET4) {
    const double *V[4] = {X[0], X[1], X[2], X[3]};
    return pbng_tet_barycentric(V, q, w) == 0 && w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0;
  }
  if (coinciding_node(t, X, q, pbng_element_longest_edge(t, X)) >= 0) return 1;
  return pbng_element_reference_coordinates(t, X, q, r) == 0 && pbng_reference_closest_point(t, r, rc) <= REFERENCE_INSIDE_TOL;
}

/* tet4: barycentric coordinates, exact distance (see pbng_element_point_weights). */
static double tet4_point_weights(const double (*X)[3], const double q[3], double w[4])
{
  const double *V[4] = {X[0], X[1], X[2], X[3]};
  double wc[4];
  const double distance = pbng_point_tet_distance(V, q, wc);
  if (distance > 0) { /* outside: extrapolate unless that is wild */
    double wl[4];
    int wild = pbng_tet_barycentric(V, q, wl) != 0;
    for (int a = 0; a < 4 && !wild; ++a) wild = wl[a] < -0.5;
    for (int a = 0; a < 4; ++a) w[a] = wild ? wc[a] : wl[a];
  } else if (pbng_tet_barycentric(V, q, w) != 0) return -1;
  return distance;
}

double pbng_element_point_weights(const pbng_element_type *t, const double (*X)[3], const double q[3], double *w)
{
  double r[3], rc[3], res[3], J[9], dN[PBNG_MAX_ELEMENT_NODES][3];

  if (t->kind == PBNG_ELEMENT_TET4) return tet4_point_weights(X, q, w);
  if (t->kind == PBNG_ELEMENT_TRI3) return tri3_point_weights(X, q, w);
  const int node = coinciding_node(t, X, q, pbng_element_longest_edge(t, X));
  if (node >= 0) {
    for (int a = 0; a < t->nodes; ++a) w[a] = a == node;
    return 0.0;
  }
  const int converged = pbng_element_reference_coordinates(t, X, q, r) == 0;
  const double outside = pbng_reference_closest_point(t, r, rc);
  if (converged && outside <= REFERENCE_INSIDE_TOL) {
    pbng_element_shape(t, r, w, dN);
    return 0.0;
  }
  keep_evaluable(t, rc);
  const double distance = map_residual(t, X, q, rc, res, J);
  pbng_element_shape(t, converged && outside <= EXTRAPOLATE_MAX ? r : rc, w, dN);
  return distance;
}
