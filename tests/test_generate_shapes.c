/* The solid generators (src/mesh/generate_shapes.c: box, ball, cylinder, torus), checked from the
 * meshes alone:
 *  - every tetrahedron has positive volume (computed here), and its quality 6 sqrt(2) V / l_max^3
 *    (1 for the regular tetrahedron) is above a floor; the lowest is printed;
 *  - conforming: no face belongs to more than two tetrahedra, and every face of only one (the
 *    boundary) has its corners on the solid's analytic surface (a hanging or mismatched face inside
 *    would have inner corners);
 *  - the boundary surface is closed and consistently oriented: every directed edge of the outward
 *    boundary triangles appears once and its reverse once (so every edge is shared by exactly two
 *    boundary triangles); its Euler characteristic V - E + F is 2 (box, ball, cylinder) or 0 (torus);
 *    the volume it encloses (divergence theorem) equals the sum of the tetrahedra's;
 *  - one connected body, and no two nodes closer than a tenth of the smallest edge (the torus's seam
 *    is joined, not doubled);
 *  - the volume converges to the analytic one at second order in the cell size: the error falls by
 *    at least 3x per doubling of the cells and is below the stated bound at the finest resolution
 *    (the errors are printed).
 * The open cylindrical sheet (pbng_sheet_cylinder, -scene cylinder_twist): vertex, triangle and stencil
 * counts; every vertex on the radius, the end rings at x = 0 and x = length; consistently oriented (no
 * directed edge twice, every edge but the end rings' traversed once each way); every triangle's normal
 * outward (away from the axis); the area converging to 2 pi r L; bad sizes refused.
 * The icosphere (pbng_sheet_icosphere, -scene projectile_sheet): counts (10 4^l + 2 vertices, 20 4^l triangles,
 * 30 4^l edges), every vertex on the radius, closed (every edge shared by exactly two triangles, V - E + F = 2),
 * consistently outward oriented, the area converging to 4 pi r^2; pbng_sheet_merge keeps both bodies; bad sizes
 * refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/element.h"
#include "mesh/generate_objects.h"
#include "mesh/generate_shapes.h"
#include "test_check.h"

typedef enum { BOX, BALL, CYLINDER, TORUS } shape;
static const char *const shape_name[] = {"box", "ball", "cylinder", "torus"};

/* The shapes' sizes in these tests. */
static const double box_size[3] = {0.7, 0.5, 0.3};
static const double ball_r = 0.4, cyl_r = 0.3, cyl_h = 0.8, torus_R = 0.35, torus_r = 0.12;

static PetscErrorCode make(shape s, int cells, pbng_mesh *m)
{
  PetscFunctionBeginUser;
  switch (s) {
  case BOX: PetscCall(pbng_generate_shape_box(box_size, cells, m)); break;
  case BALL: PetscCall(pbng_generate_ball(ball_r, cells, m)); break;
  case CYLINDER: PetscCall(pbng_generate_cylinder(cyl_r, cyl_h, cells, m)); break;
  case TORUS: PetscCall(pbng_generate_torus(torus_R, torus_r, cells, m)); break;
  }
  PetscFunctionReturn(0);
}

static double analytic_volume(shape s)
{
  switch (s) {
  case BOX: return box_size[0] * box_size[1] * box_size[2];
  case BALL: return 4.0 / 3.0 * PETSC_PI * ball_r * ball_r * ball_r;
  case CYLINDER: return PETSC_PI * cyl_r * cyl_r * cyl_h;
  case TORUS: return 2 * PETSC_PI * PETSC_PI * torus_R * torus_r * torus_r;
  }
  return 0;
}

/* Distance of x to the solid's analytic surface (0 on it). */
static double surface_distance(shape s, const double *x)
{
  switch (s) {
  case BOX: {
    double d = INFINITY;
    for (int k = 0; k < 3; ++k) d = fmin(d, 0.5 * box_size[k] - fabs(x[k]));
    return fabs(d);
  }
  case BALL: return fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - ball_r);
  case CYLINDER: return fmin(fabs(sqrt(x[0] * x[0] + x[1] * x[1]) - cyl_r), fabs(fabs(x[2]) - 0.5 * cyl_h));
  case TORUS: {
    const double rho = sqrt(x[0] * x[0] + x[2] * x[2]) - torus_R;
    return fabs(sqrt(rho * rho + x[1] * x[1]) - torus_r);
  }
  }
  return INFINITY;
}

static double sub_dot_cross(const double *o, const double *a, const double *b, const double *c)
{
  double u[3], v[3], w[3];
  for (int d = 0; d < 3; ++d) u[d] = a[d] - o[d], v[d] = b[d] - o[d], w[d] = c[d] - o[d];
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

static double dist(const double *a, const double *b) { return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2])); }

/* Volumes and qualities of every tetrahedron: the total, the smallest volume / the mean, the smallest
 * quality, the smallest edge. */
typedef struct {
  double volume, min_relative_volume, min_quality, min_edge;
} tet_stats;

static tet_stats tetrahedra_stats(const pbng_mesh *m)
{
  tet_stats s = {0, INFINITY, INFINITY, INFINITY};
  double vmin = INFINITY;
  for (int64_t e = 0; e < m->nelems; ++e) {
    const int32_t *t = &m->elems[4 * e];
    const double *X[4] = {&m->X[3 * t[0]], &m->X[3 * t[1]], &m->X[3 * t[2]], &m->X[3 * t[3]]};
    const double v = sub_dot_cross(X[0], X[1], X[2], X[3]) / 6;
    double lmax = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) lmax = fmax(lmax, dist(X[a], X[b])), s.min_edge = fmin(s.min_edge, dist(X[a], X[b]));
    s.volume += v, vmin = fmin(vmin, v);
    s.min_quality = fmin(s.min_quality, 6 * sqrt(2.0) * v / (lmax * lmax * lmax));
  }
  s.min_relative_volume = vmin / (s.volume / (double)m->nelems);
  return s;
}

typedef struct {
  int32_t key[3]; /* sorted corners */
  int32_t corner[3]; /* outward order */
} face;

static int compare_faces(const void *a, const void *b)
{
  const face *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x->key[k] != y->key[k]) return (x->key[k] > y->key[k]) - (x->key[k] < y->key[k]);
  return 0;
}

static int compare_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void sort3(int32_t *k)
{
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2 - a; ++b)
      if (k[b] > k[b + 1]) {
        const int32_t t = k[b];
        k[b] = k[b + 1], k[b + 1] = t;
      }
}

/* The boundary triangles (faces of exactly one tetrahedron, outward): *nb of them into tris[3 *nb];
 * *over counts faces shared by more than two tetrahedra. */
static PetscErrorCode boundary_triangles(const pbng_mesh *m, int64_t *nb, int32_t **tris, int64_t *over)
{
  const pbng_element_type *t = pbng_element_type_get(PBNG_ELEMENT_TET4);
  face *f;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(4 * m->nelems, &f));
  for (int64_t e = 0; e < m->nelems; ++e)
    for (int j = 0; j < 4; ++j) {
      face *g = &f[4 * e + j];
      for (int c = 0; c < 3; ++c) g->corner[c] = g->key[c] = m->elems[4 * e + t->faces[j].node[c]];
      sort3(g->key);
    }
  qsort(f, (size_t)(4 * m->nelems), sizeof(face), compare_faces);
  PetscCall(PetscMalloc1(3 * 4 * m->nelems, tris));
  *nb = *over = 0;
  for (int64_t a = 0, b; a < 4 * m->nelems; a = b) {
    for (b = a + 1; b < 4 * m->nelems && !compare_faces(&f[a], &f[b]); ++b) {}
    if (b - a == 1) PetscCall(PetscArraycpy(&(*tris)[3 * (*nb)++], f[a].corner, 3));
    if (b - a > 2) ++*over;
  }
  PetscCall(PetscFree(f));
  PetscFunctionReturn(0);
}

/* The boundary surface: directed edges each with exactly one reverse (closed, consistently oriented);
 * the Euler characteristic; the enclosed volume; the largest distance of a boundary corner from the
 * analytic surface. */
static PetscErrorCode check_surface(shape s, int cells, const pbng_mesh *m, double tet_volume)
{
  int64_t nb = 0, over = 0, *edges, unmatched = 0, nvert = 0;
  int32_t *tris;
  char what[128];
  double enclosed = 0, off = 0;
  const double origin[3] = {0, 0, 0};

  PetscFunctionBeginUser;
  PetscCall(boundary_triangles(m, &nb, &tris, &over));
  snprintf(what, sizeof(what), "%s, %d cells: no face of more than two tetrahedra", shape_name[s], cells);
  check(over == 0, what, (double)over, 0);
  PetscCall(PetscMalloc1(3 * nb, &edges));
  for (int64_t b = 0; b < nb; ++b) {
    const int32_t *c = &tris[3 * b];
    for (int k = 0; k < 3; ++k) edges[3 * b + k] = (int64_t)c[k] * m->nnodes + c[(k + 1) % 3], off = fmax(off, surface_distance(s, &m->X[3 * c[k]]));
    enclosed += sub_dot_cross(origin, &m->X[3 * c[0]], &m->X[3 * c[1]], &m->X[3 * c[2]]) / 6;
  }
  qsort(edges, (size_t)(3 * nb), sizeof(int64_t), compare_int64);
  for (int64_t k = 0; k < 3 * nb; ++k) {
    const int64_t a = edges[k] / m->nnodes, b = edges[k] % m->nnodes, reverse = b * m->nnodes + a;
    const int64_t *r = bsearch(&reverse, edges, (size_t)(3 * nb), sizeof(int64_t), compare_int64);
    const int twice = k + 1 < 3 * nb && edges[k + 1] == edges[k];
    if (!r || twice) ++unmatched;
  }
  char *on_surface;
  PetscCall(PetscCalloc1(m->nnodes, &on_surface));
  for (int64_t k = 0; k < 3 * nb; ++k) on_surface[tris[k]] = 1;
  for (int64_t i = 0; i < m->nnodes; ++i) nvert += on_surface[i];
  const int64_t chi = nvert - 3 * nb / 2 + nb, expected = s == TORUS ? 0 : 2;
  snprintf(what, sizeof(what), "%s, %d cells: every boundary edge in exactly two boundary triangles, oppositely", shape_name[s], cells);
  check(unmatched == 0 && (3 * nb) % 2 == 0, what, (double)unmatched, 0);
  snprintf(what, sizeof(what), "%s, %d cells: Euler characteristic of the boundary", shape_name[s], cells);
  check(chi == expected, what, (double)chi, (double)expected);
  snprintf(what, sizeof(what), "%s, %d cells: enclosed volume = the tetrahedra's", shape_name[s], cells);
  check(fabs(enclosed - tet_volume) <= 1e-12 * tet_volume, what, enclosed, tet_volume);
  snprintf(what, sizeof(what), "%s, %d cells: boundary corners on the analytic surface", shape_name[s], cells);
  check(off <= 1e-12, what, off, 0);
  PetscCall(PetscFree(on_surface));
  PetscCall(PetscFree(edges));
  PetscCall(PetscFree(tris));
  PetscFunctionReturn(0);
}

static int32_t find_root(int32_t *parent, int32_t a)
{
  while (parent[a] != a) a = parent[a] = parent[parent[a]];
  return a;
}

typedef struct {
  double x;
  int64_t i;
} sorted_node;

static int compare_sorted_nodes(const void *a, const void *b)
{
  const double xa = ((const sorted_node *)a)->x, xb = ((const sorted_node *)b)->x;
  return (xa > xb) - (xa < xb);
}

/* One connected body, and no two nodes closer than min_edge / 10 (all pairs). */
static PetscErrorCode check_nodes(shape s, int cells, const pbng_mesh *m, double min_edge)
{
  int32_t *parent;
  int64_t bodies = 0, close = 0;
  char what[128];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m->nnodes, &parent));
  for (int64_t i = 0; i < m->nnodes; ++i) parent[i] = (int32_t)i;
  for (int64_t e = 0; e < m->nelems; ++e)
    for (int a = 1; a < 4; ++a) parent[find_root(parent, m->elems[4 * e + a])] = find_root(parent, m->elems[4 * e]);
  for (int64_t i = 0; i < m->nnodes; ++i) bodies += find_root(parent, (int32_t)i) == i;
  { /* every pair closer than 0.1 min_edge, found among the nodes sorted by x (a pair that close is that close in x) */
    const double tol = 0.1 * min_edge;
    sorted_node *byx;
    PetscCall(PetscMalloc1(m->nnodes, &byx));
    for (int64_t i = 0; i < m->nnodes; ++i) byx[i] = (sorted_node){m->X[3 * i], i};
    qsort(byx, (size_t)m->nnodes, sizeof(*byx), compare_sorted_nodes);
    for (int64_t a = 0; a < m->nnodes; ++a)
      for (int64_t b = a + 1; b < m->nnodes && byx[b].x - byx[a].x < tol; ++b) close += dist(&m->X[3 * byx[a].i], &m->X[3 * byx[b].i]) < tol;
    PetscCall(PetscFree(byx));
  }
  snprintf(what, sizeof(what), "%s, %d cells: one body", shape_name[s], cells);
  check(bodies == 1, what, (double)bodies, 1);
  snprintf(what, sizeof(what), "%s, %d cells: no duplicate nodes", shape_name[s], cells);
  check(close == 0, what, (double)close, 0);
  PetscCall(PetscFree(parent));
  PetscFunctionReturn(0);
}

/* Every check on one shape at several resolutions; the volume errors must fall at second order and
 * be below bound at the finest. */
static PetscErrorCode check_shape(shape s, double quality_floor, double bound)
{
  static const int resolutions[] = {2, 4, 8, 16}; /* 32 cells: the torus alone is 1.8 M tetrahedra, 10 s of the test */
  double previous = 0;
  char what[128];

  PetscFunctionBeginUser;
  for (size_t r = 0; r < sizeof(resolutions) / sizeof(resolutions[0]); ++r) {
    const int cells = resolutions[r];
    pbng_mesh m;
    PetscCall(make(s, cells, &m));
    const tet_stats st = tetrahedra_stats(&m);
    const double error = fabs(st.volume - analytic_volume(s)) / analytic_volume(s);
    printf("%-8s %2d cells: %7" PRId64 " nodes %8" PRId64 " tets, volume error %.3e, min quality %.3f, min V / mean V %.3f\n", shape_name[s], cells,
           m.nnodes, m.nelems, error, st.min_quality, st.min_relative_volume);
    snprintf(what, sizeof(what), "%s, %d cells: every tetrahedron positive, quality above the floor", shape_name[s], cells);
    check(st.min_quality > quality_floor, what, st.min_quality, quality_floor);
    PetscCall(check_surface(s, cells, &m, st.volume));
    PetscCall(check_nodes(s, cells, &m, st.min_edge));
    if (s != BOX && r > 0) {
      snprintf(what, sizeof(what), "%s, %d cells: the volume error falls at second order (at least 3x per doubling)", shape_name[s], cells);
      check(error * 3 <= previous, what, error, previous);
    }
    if (s == BOX) {
      snprintf(what, sizeof(what), "box, %d cells: exact volume", cells);
      check(error <= 1e-11, what, error, 0); /* rounding of the sum */
    }
    previous = error;
    PetscCall(pbng_mesh_destroy(&m));
  }
  snprintf(what, sizeof(what), "%s: volume error at 16 cells below %.1e", shape_name[s], bound);
  check(previous <= bound, what, previous, bound);
  PetscFunctionReturn(0);
}

/* The objects_dropping layout: n objects, each its own body within 0.55 of its centre, the bodies'
 * bounding balls apart, every node inside the container by at least 0.06; the node counts at each
 * scale are printed, and they grow about as scale^3. */
static PetscErrorCode check_objects(void)
{
  double box[6];
  int64_t nodes[3] = {0};
  static const double scales[3] = {1, 2, 4};
  char what[128];

  PetscFunctionBeginUser;
  pbng_objects_container(box);
  for (int k = 0; k < 3; ++k) {
    pbng_mesh m;
    int64_t per_kind[PBNG_SOLID_KIND_COUNT] = {0}, first = 0;
    double far = 0, wall = INFINITY;
    PetscCall(pbng_generate_objects(40, scales[k], &m));
    nodes[k] = m.nnodes;
    for (int i = 0; i < 40; ++i) {
      pbng_solid s, t;
      pbng_mesh one;
      pbng_objects_solid(i, &s);
      PetscCall(pbng_generate_solid(&s, pbng_objects_cell_size(scales[k]), &one));
      per_kind[s.kind] += one.nnodes;
      int64_t moved = 0;
      for (int64_t v = 0; v < one.nnodes; ++v) {
        const double *x = &m.X[3 * (first + v)];
        far = fmax(far, dist(x, s.center));
        moved += memcmp(x, &one.X[3 * v], sizeof(double[3])) != 0;
        for (int d = 0; d < 3; ++d) wall = fmin(wall, fmin(x[d] - box[d], box[3 + d] - x[d]));
      }
      check(moved == 0, "objects: object i's nodes in order in the mesh", (double)i, (double)moved);
      for (int j = 0; j < i; ++j) {
        pbng_objects_solid(j, &t);
        snprintf(what, sizeof(what), "objects %d and %d: bounding balls apart", i, j);
        check(dist(s.center, t.center) > 1.1, what, dist(s.center, t.center), 1.1);
      }
      first += one.nnodes;
      PetscCall(pbng_mesh_destroy(&one));
    }
    printf("objects, scale %g: %" PRId64 " nodes %" PRId64 " tets (boxes %" PRId64 ", balls %" PRId64 ", cylinders %" PRId64 ", tori %" PRId64
           " nodes)\n", scales[k], m.nnodes, m.nelems, per_kind[0], per_kind[1], per_kind[2], per_kind[3]);
    check(first == m.nnodes, "objects: the mesh is the objects' meshes", (double)first, (double)m.nnodes);
    check(far <= 0.55 + 1e-12, "objects: every node within 0.55 of its object's centre", far, 0.55);
    check(wall >= 0.06, "objects: every node at least 0.06 inside the container", wall, 0.06);
    PetscCall(pbng_mesh_destroy(&m));
  }
  check(nodes[2] > 4 * nodes[1] && nodes[2] < 10 * nodes[1], "objects: nodes grow about as scale^3", (double)nodes[2], (double)nodes[1]);
  PetscFunctionReturn(0);
}

/* Bad sizes are errors naming the generator. */
static PetscErrorCode check_errors(void)
{
  pbng_mesh m;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_generate_ball(-1, 4, &m);
  check(ierr != 0, "ball of negative radius refused", ierr, 1);
  ierr = pbng_generate_torus(0.1, 0.2, 4, &m);
  check(ierr != 0, "torus with minor >= major refused", ierr, 1);
  ierr = pbng_generate_cylinder(0.1, 0.2, 0, &m);
  check(ierr != 0, "cylinder of 0 cells refused", ierr, 1);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

static int compare_i64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* One cylindrical sheet of m x n vertices: the checks of the header comment; returns its area. */
static PetscErrorCode check_cylinder_sheet(double r, double len, int64_t m, int64_t n, double *area)
{
  pbng_sheet s;
  char what[160];
  int64_t *dir;

  PetscFunctionBeginUser;
  PetscCall(pbng_sheet_cylinder(r, len, m, n, &s));
  snprintf(what, sizeof(what), "cylinder sheet %" PRId64 "x%" PRId64 ": ", m, n);
  const size_t w = strlen(what);
  snprintf(what + w, sizeof(what) - w, "nodes around x along");
  check(s.nnodes == m * n, what, (double)s.nnodes, (double)(m * n));
  snprintf(what + w, sizeof(what) - w, "triangles 2 around (along - 1)");
  check(s.ntri == 2 * m * (n - 1), what, (double)s.ntri, (double)(2 * m * (n - 1)));
  snprintf(what + w, sizeof(what) - w, "stencils = interior edges around (3 along - 4)");
  check(s.nstencil == m * (3 * n - 4), what, (double)s.nstencil, (double)(m * (3 * n - 4)));
  double off = 0, xmin = INFINITY, xmax = -INFINITY;
  int64_t ends = 0;
  for (int64_t v = 0; v < s.nnodes; ++v) {
    const double *X = &s.X[3 * v];
    off = fmax(off, fabs(sqrt(X[1] * X[1] + X[2] * X[2]) - r));
    xmin = fmin(xmin, X[0]), xmax = fmax(xmax, X[0]);
    ends += X[0] == 0 || X[0] == len;
  }
  snprintf(what + w, sizeof(what) - w, "every vertex on the radius");
  check(off <= 1e-14 * r, what, off, 1e-14 * r);
  snprintf(what + w, sizeof(what) - w, "x spans [0, length]");
  check(xmin == 0 && xmax == len, what, xmin, xmax);
  snprintf(what + w, sizeof(what) - w, "2 around vertices exactly on the end rings");
  check(ends == 2 * m, what, (double)ends, (double)(2 * m));
  /* orientation: directed edges a -> b as a n + b, sorted */
  PetscCall(PetscCalloc1(3 * s.ntri, &dir));
  double inward = INFINITY, a_sum = 0;
  for (int64_t t = 0; t < s.ntri; ++t) {
    const int64_t *c = s.tri[t];
    const double *A = &s.X[3 * c[0]], *B = &s.X[3 * c[1]], *C = &s.X[3 * c[2]];
    double u[3], v[3], nrm[3], radial[3] = {0, (A[1] + B[1] + C[1]) / 3, (A[2] + B[2] + C[2]) / 3};
    for (int d = 0; d < 3; ++d) u[d] = B[d] - A[d], v[d] = C[d] - A[d];
    nrm[0] = u[1] * v[2] - u[2] * v[1], nrm[1] = u[2] * v[0] - u[0] * v[2], nrm[2] = u[0] * v[1] - u[1] * v[0];
    const double nn = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]), rr = sqrt(radial[1] * radial[1] + radial[2] * radial[2]);
    inward = fmin(inward, (nrm[1] * radial[1] + nrm[2] * radial[2]) / (nn * rr)); /* cosine of normal and outward direction */
    a_sum += 0.5 * nn;
    for (int k = 0; k < 3; ++k) dir[3 * t + k] = c[k] * s.nnodes + c[(k + 1) % 3];
  }
  qsort(dir, (size_t)(3 * s.ntri), sizeof(*dir), compare_i64);
  int64_t twice = 0, unpaired = 0, unpaired_inside = 0;
  for (int64_t k = 0; k < 3 * s.ntri; ++k) {
    if (k > 0 && dir[k] == dir[k - 1]) ++twice;
    const int64_t a = dir[k] / s.nnodes, b = dir[k] % s.nnodes, rev = b * s.nnodes + a;
    if (!bsearch(&rev, dir, (size_t)(3 * s.ntri), sizeof(*dir), compare_i64)) {
      ++unpaired;
      unpaired_inside += !((a / m == 0 && b / m == 0) || (a / m == n - 1 && b / m == n - 1)); /* not an end ring's edge */
    }
  }
  PetscCall(PetscFree(dir));
  snprintf(what + w, sizeof(what) - w, "no directed edge twice");
  check(twice == 0, what, (double)twice, 0);
  snprintf(what + w, sizeof(what) - w, "unpaired directed edges: the two end rings'");
  check(unpaired == 2 * m && unpaired_inside == 0, what, (double)unpaired, (double)(2 * m));
  snprintf(what + w, sizeof(what) - w, "every normal outward (least cosine with the radial direction)");
  check(inward > 0.9 * cos(PETSC_PI / (double)m), what, inward, 0.9 * cos(PETSC_PI / (double)m));
  printf("cylinder sheet %" PRId64 " x %" PRId64 ": %" PRId64 " nodes, %" PRId64 " triangles, %" PRId64 " stencils, least normal cosine %.6f, area %.6f\n", m, n,
         s.nnodes, s.ntri, s.nstencil, inward, a_sum);
  *area = a_sum;
  PetscCall(pbng_sheet_destroy(&s));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_cylinder_sheets(void)
{
  const double r = 0.7, len = 2.1, exact = 2 * PETSC_PI * r * len;
  double area[3], scratch;
  pbng_sheet s;

  PetscFunctionBeginUser;
  PetscCall(check_cylinder_sheet(r, len, 7, 3, &scratch)); /* odd around: the seam's cells keep one parity */
  PetscCall(check_cylinder_sheet(r, len, 3, 2, &scratch)); /* the smallest */
  PetscCall(check_cylinder_sheet(1.0, 3.0, 40, 20, &scratch)); /* cylinder_twist's default */
  for (int k = 0; k < 3; ++k) PetscCall(check_cylinder_sheet(r, len, 16 << k, 5 << k, &area[k]));
  check(area[2] < exact && exact - area[1] > 3.5 * (exact - area[2]), "cylinder sheet: area below 2 pi r L, error falling ~4x per doubling", exact - area[1],
        exact - area[2]);
  check((exact - area[2]) / exact < 2e-3, "cylinder sheet 64 x 20: area within 2e-3 of 2 pi r L", (exact - area[2]) / exact, 2e-3);
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  check(pbng_sheet_cylinder(r, len, 2, 5, &s) != 0, "cylinder sheet of 2 vertices around refused", 1, 1);
  check(pbng_sheet_cylinder(r, len, 8, 1, &s) != 0, "cylinder sheet of 1 ring refused", 1, 1);
  check(pbng_sheet_cylinder(0, len, 8, 4, &s) != 0, "cylinder sheet of radius 0 refused", 1, 1);
  check(pbng_sheet_cylinder(r, -1, 8, 4, &s) != 0, "cylinder sheet of negative length refused", 1, 1);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

/* The icosphere (pbng_sheet_icosphere, -scene projectile_sheet): 10 4^l + 2 vertices, 20 4^l triangles, 30 4^l
 * stencils (one per edge: closed); every vertex on the radius; closed and consistently oriented (every directed edge
 * once, its reverse once: every edge shared by exactly two triangles); V - E + F = 2; every normal outward (positive
 * cosine with the direction from the centre); no degenerate triangle; area returned. */
static PetscErrorCode check_icosphere(double r, const double o[3], int level, double *area)
{
  pbng_sheet s;
  char what[160];
  int64_t *dir;

  PetscFunctionBeginUser;
  PetscCall(pbng_sheet_icosphere(r, o, level, &s));
  snprintf(what, sizeof(what), "icosphere level %d: ", level);
  const size_t w = strlen(what);
  const int64_t p4 = (int64_t)1 << (2 * level);
  snprintf(what + w, sizeof(what) - w, "vertices 10 4^l + 2");
  check(s.nnodes == 10 * p4 + 2, what, (double)s.nnodes, (double)(10 * p4 + 2));
  snprintf(what + w, sizeof(what) - w, "triangles 20 4^l");
  check(s.ntri == 20 * p4, what, (double)s.ntri, (double)(20 * p4));
  snprintf(what + w, sizeof(what) - w, "stencils = edges 30 4^l (closed)");
  check(s.nstencil == 30 * p4, what, (double)s.nstencil, (double)(30 * p4));
  snprintf(what + w, sizeof(what) - w, "Euler characteristic V - E + F = 2");
  check(s.nnodes - s.nstencil + s.ntri == 2, what, (double)(s.nnodes - s.nstencil + s.ntri), 2);
  double off = 0;
  for (int64_t v = 0; v < s.nnodes; ++v) {
    const double *X = &s.X[3 * v];
    off = fmax(off, fabs(sqrt((X[0] - o[0]) * (X[0] - o[0]) + (X[1] - o[1]) * (X[1] - o[1]) + (X[2] - o[2]) * (X[2] - o[2])) - r));
  }
  snprintf(what + w, sizeof(what) - w, "every vertex on the radius");
  check(off <= 1e-14 * (r + fabs(o[0]) + fabs(o[1]) + fabs(o[2])), what, off, 1e-14 * r);
  PetscCall(PetscCalloc1(3 * s.ntri, &dir));
  double outward = INFINITY, smallest = INFINITY, a_sum = 0;
  for (int64_t t = 0; t < s.ntri; ++t) {
    const int64_t *c = s.tri[t];
    const double *A = &s.X[3 * c[0]], *B = &s.X[3 * c[1]], *C = &s.X[3 * c[2]];
    double u[3], v[3], nrm[3], radial[3];
    for (int d = 0; d < 3; ++d) u[d] = B[d] - A[d], v[d] = C[d] - A[d], radial[d] = (A[d] + B[d] + C[d]) / 3 - o[d];
    nrm[0] = u[1] * v[2] - u[2] * v[1], nrm[1] = u[2] * v[0] - u[0] * v[2], nrm[2] = u[0] * v[1] - u[1] * v[0];
    const double nn = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]), rr = sqrt(radial[0] * radial[0] + radial[1] * radial[1] + radial[2] * radial[2]);
    outward = fmin(outward, (nrm[0] * radial[0] + nrm[1] * radial[1] + nrm[2] * radial[2]) / (nn * rr));
    smallest = fmin(smallest, 0.5 * nn);
    a_sum += 0.5 * nn;
    for (int k = 0; k < 3; ++k) dir[3 * t + k] = c[k] * s.nnodes + c[(k + 1) % 3];
  }
  qsort(dir, (size_t)(3 * s.ntri), sizeof(*dir), compare_i64);
  int64_t twice = 0, unpaired = 0;
  for (int64_t k = 0; k < 3 * s.ntri; ++k) {
    if (k > 0 && dir[k] == dir[k - 1]) ++twice;
    const int64_t a = dir[k] / s.nnodes, b = dir[k] % s.nnodes, rev = b * s.nnodes + a;
    unpaired += !bsearch(&rev, dir, (size_t)(3 * s.ntri), sizeof(*dir), compare_i64);
  }
  PetscCall(PetscFree(dir));
  snprintf(what + w, sizeof(what) - w, "no directed edge twice (consistent orientation)");
  check(twice == 0, what, (double)twice, 0);
  snprintf(what + w, sizeof(what) - w, "closed: every directed edge's reverse present");
  check(unpaired == 0, what, (double)unpaired, 0);
  snprintf(what + w, sizeof(what) - w, "every normal outward (least cosine with the radial direction)");
  check(outward > 0.75, what, outward, 0.75);
  snprintf(what + w, sizeof(what) - w, "no degenerate triangle (least area / mean area)");
  check(smallest > 0.5 * a_sum / (double)s.ntri, what, smallest / (a_sum / (double)s.ntri), 0.5);
  *area = a_sum;
  PetscCall(pbng_sheet_destroy(&s));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_icospheres(void)
{
  const double r = 0.15, o[3] = {0.3, -0.2, -0.18}, zero[3] = {0, 0, 0}, exact = 4 * PETSC_PI * r * r;
  double area[5];
  pbng_sheet s, grid, ball, both;

  PetscFunctionBeginUser;
  for (int l = 0; l < 5; ++l) PetscCall(check_icosphere(r, l == 2 ? zero : o, l, &area[l]));
  for (int l = 2; l < 5; ++l) { /* level 0 -> 1: 3.3x (the icosahedron is far from round) */
    char what[96];
    snprintf(what, sizeof(what), "icosphere: area below 4 pi r^2, error falling >= 3.5x from level %d to %d", l - 1, l);
    check(area[l] < exact && exact - area[l - 1] > 3.5 * (exact - area[l]), what, exact - area[l - 1], exact - area[l]);
  }
  check((exact - area[4]) / exact < 2e-3, "icosphere level 4: area within 2e-3 of 4 pi r^2", (exact - area[4]) / exact, 2e-3);
  /* merge: a 3 x 4 grid and a level-1 icosphere as one sheet */
  const double eu[3] = {1, 0, 0}, ev[3] = {0, 1, 0};
  PetscCall(pbng_sheet_grid(3, 4, 1, 1, zero, eu, ev, &grid));
  PetscCall(pbng_sheet_icosphere(r, o, 1, &ball));
  PetscCall(pbng_sheet_merge(&grid, &ball, &both));
  check(both.nnodes == grid.nnodes + ball.nnodes && both.ntri == grid.ntri + ball.ntri && both.nstencil == grid.nstencil + ball.nstencil,
        "merge: vertices, triangles and stencils add up", (double)both.nstencil, (double)(grid.nstencil + ball.nstencil));
  double moved = 0, shifted = 0;
  for (int64_t k = 0; k < 3 * grid.nnodes; ++k) moved = fmax(moved, fabs(both.X[k] - grid.X[k]));
  for (int64_t k = 0; k < 3 * ball.nnodes; ++k) moved = fmax(moved, fabs(both.X[3 * grid.nnodes + k] - ball.X[k]));
  for (int64_t t = 0; t < ball.ntri; ++t)
    for (int k = 0; k < 3; ++k) shifted = fmax(shifted, fabs((double)(both.tri[grid.ntri + t][k] - ball.tri[t][k] - grid.nnodes)));
  for (int64_t t = 0; t < grid.ntri; ++t)
    for (int k = 0; k < 3; ++k) shifted = fmax(shifted, fabs((double)(both.tri[t][k] - grid.tri[t][k])));
  check(moved == 0 && shifted == 0, "merge: positions kept, the second body's corners shifted by the first's vertex count", moved + shifted, 0);
  PetscCall(pbng_sheet_destroy(&both));
  PetscCall(pbng_sheet_destroy(&ball));
  PetscCall(pbng_sheet_destroy(&grid));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  check(pbng_sheet_icosphere(r, o, -1, &s) != 0, "icosphere of level -1 refused", 1, 1);
  check(pbng_sheet_icosphere(r, o, 9, &s) != 0, "icosphere of level 9 refused", 1, 1);
  check(pbng_sheet_icosphere(0, o, 2, &s) != 0, "icosphere of radius 0 refused", 1, 1);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  (void)next_random;
  PetscCall(check_shape(BOX, 0.3, 1e-11));
  PetscCall(check_shape(BALL, 0.15, 5e-3));     /* measured at 16 cells: 4.50e-3 (1.13e-3 at 32) */
  PetscCall(check_shape(CYLINDER, 0.15, 2e-3)); /* measured 1.80e-3 (4.51e-4 at 32) */
  PetscCall(check_shape(TORUS, 0.15, 2.5e-3));  /* measured 2.11e-3 (5.28e-4 at 32) */
  PetscCall(check_objects());
  PetscCall(check_errors());
  PetscCall(check_cylinder_sheets());
  PetscCall(check_icospheres());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_generate_shapes: %d checks, %d failures\n", checks, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
