/* Structured tetrahedral meshes of simple solids (generate_shapes.h). */
#include "mesh/generate_shapes.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/element.h"
#include <petscmath.h>
#include "mesh/generate.h"

/* The Kuhn split of a cell whose corners are numbered by bits (dx, dy, dz) = (1, 2, 4): one tetrahedron
 * per order of the axes on the path 0 -> 7 along the cell's edges (the table of -tet_split six). */
static const int kuhn[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};

/* A structured grid of cells in parameter space and its map onto a solid. */
typedef struct {
  int cells[3];    /* cells per axis */
  int mirror[3];   /* 1: the split mirrored about the grid's centre along this axis */
  int periodic;    /* 1: axis 2 closes on itself (its last cells join the first layer of points) */
  double param[3]; /* physical parameters of the map (radius, height, ...) */
  /* The point of the solid at parameter u in [0,1]^3 (grid point (i,j,k) at u = (i,j,k) / cells). */
  void (*map)(const double param[3], const double u[3], double x[3]);
} mapped_grid;

/* Grid points along axis d (a periodic axis repeats none). */
static int64_t grid_points(const mapped_grid *g, int d) { return g->cells[d] + (d == 2 && g->periodic ? 0 : 1); }

/* The index of grid point (i, j, k), wrapping the periodic axis. */
static int64_t grid_node(const mapped_grid *g, const int64_t ijk[3])
{
  const int64_t n0 = grid_points(g, 0), n1 = grid_points(g, 1), k = ijk[2] % grid_points(g, 2);
  return ijk[0] + n0 * (ijk[1] + n1 * k);
}

/* The corner mask of cell c: bit d set when axis d is mirrored and the cell lies in the lower half, so
 * that corner (0 ^ mask), the start of the Kuhn diagonal, is the cell's corner nearest the centre. */
static int cell_mirror_mask(const mapped_grid *g, const int64_t c[3])
{
  int mask = 0;
  for (int d = 0; d < 3; ++d)
    if (g->mirror[d] && 2 * c[d] < g->cells[d]) mask |= 1 << d;
  return mask;
}

/* Writes cell c's six tetrahedra (node indices), each oriented positively in parameter space. */
static void cell_tetrahedra(const mapped_grid *g, const int64_t c[3], int32_t *tets)
{
  const int mask = cell_mirror_mask(g, c);
  for (int t = 0; t < 6; ++t) {
    int64_t ijk[4][3];
    double P[4][3];
    for (int a = 0; a < 4; ++a) {
      const int corner = kuhn[t][a] ^ mask;
      for (int d = 0; d < 3; ++d) ijk[a][d] = c[d] + ((corner >> d) & 1), P[a][d] = (double)ijk[a][d];
    }
    const int flip = pbng_tet_signed_volume(P[0], P[1], P[2], P[3]) < 0;
    for (int a = 0; a < 4; ++a) tets[4 * t + a] = (int32_t)grid_node(g, ijk[flip && a >= 2 ? 5 - a : a]);
  }
}

/* The mesh of a mapped grid: every grid point mapped, six tetrahedra per cell in cell order. */
static PetscErrorCode generate_mapped_grid(const mapped_grid *g, const char *what, pbng_mesh *mesh)
{
  const int64_t np[3] = {grid_points(g, 0), grid_points(g, 1), grid_points(g, 2)};
  const int64_t nnodes = np[0] * np[1] * np[2], nelems = 6 * (int64_t)g->cells[0] * g->cells[1] * g->cells[2];

  PetscFunctionBeginUser;
  PetscCheck(nnodes < INT32_MAX && nelems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes and %" PRId64 " tetrahedra (at most 2^31 - 1 each)", what, nnodes, nelems);
  PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TET4, nnodes, nelems));
  for (int64_t n = 0; n < nnodes; ++n) {
    const int64_t ijk[3] = {n % np[0], (n / np[0]) % np[1], n / (np[0] * np[1])};
    double u[3];
    for (int d = 0; d < 3; ++d) u[d] = (double)ijk[d] / g->cells[d];
    g->map(g->param, u, &mesh->X[3 * n]);
  }
  int64_t e = 0;
  for (int64_t k = 0; k < g->cells[2]; ++k)
    for (int64_t j = 0; j < g->cells[1]; ++j)
      for (int64_t i = 0; i < g->cells[0]; ++i, e += 6) cell_tetrahedra(g, (const int64_t[3]){i, j, k}, &mesh->elems[4 * e]);
  snprintf(mesh->source, sizeof(mesh->source), "%s", what);
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}

/* p in [-1,1]^dim moved from the cube shell |p|_inf = s to the sphere (circle) of radius s, along
 * its ray: p |p|_inf / |p|_2. The factor depends only on the direction, so the map's Jacobian has
 * determinant factor^dim > 0 (up to its kinks on the cube's diagonal planes, where it stays continuous). */
static void shell_to_sphere(int dim, double *p)
{
  double inf = 0, two = 0;
  for (int d = 0; d < dim; ++d) inf = fmax(inf, fabs(p[d])), two += p[d] * p[d];
  if (two == 0) return;
  const double f = inf / sqrt(two);
  for (int d = 0; d < dim; ++d) p[d] *= f;
}

/* param: radius. */
static void map_ball(const double param[3], const double u[3], double x[3])
{
  for (int d = 0; d < 3; ++d) x[d] = 2 * u[d] - 1;
  shell_to_sphere(3, x);
  for (int d = 0; d < 3; ++d) x[d] *= param[0];
}

/* The disk of radius r at parameter (u0, u1): a[2]. */
static void map_disk(double r, double u0, double u1, double a[2])
{
  a[0] = 2 * u0 - 1, a[1] = 2 * u1 - 1;
  shell_to_sphere(2, a);
  a[0] *= r, a[1] *= r;
}

/* param: radius, height; the axis is z. */
static void map_cylinder(const double param[3], const double u[3], double x[3])
{
  map_disk(param[0], u[0], u[1], x);
  x[2] = param[1] * (u[2] - 0.5);
}

/* param: major, minor radius; the axis is y. The disk (a, b) at angle phi = 2 pi u2 is the point
 * ((R + a) cos phi, b, (R + a) sin phi): the frame (e_rho, e_y, e_phi) is right-handed, so the map keeps
 * the orientation. */
static void map_torus(const double param[3], const double u[3], double x[3])
{
  double a[2];
  const double phi = 2 * PETSC_PI * u[2];
  map_disk(param[1], u[0], u[1], a);
  x[0] = (param[0] + a[0]) * cos(phi), x[1] = a[1], x[2] = (param[0] + a[0]) * sin(phi);
}

int pbng_shape_even_cells(int cells) { return cells < 2 ? 2 : cells + (cells & 1); }

int pbng_torus_segments(double major, double minor, int cells)
{
  const double h = 2 * minor / pbng_shape_even_cells(cells);
  const long n = lround(2 * PETSC_PI * major / h);
  return n < 6 ? 6 : (int)n;
}

/* The resolution and sizes every generator needs: positive, finite. */
static PetscErrorCode check_shape(const char *what, int cells, int nsizes, const double *size)
{
  PetscFunctionBeginUser;
  PetscCheck(cells >= 1 && cells <= 4096, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: %d cells (need 1..4096)", what, cells);
  for (int k = 0; k < nsizes; ++k)
    PetscCheck(size[k] > 0 && isfinite(size[k]), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: size %d is %g (need > 0)", what, k, size[k]);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_shape_box(const double size[3], int cells, pbng_mesh *mesh)
{
  const double longest = fmax(size[0], fmax(size[1], size[2]));
  int64_t n[3];
  double lo[3], hi[3];

  PetscFunctionBeginUser;
  PetscCall(check_shape("box", cells, 3, size));
  for (int d = 0; d < 3; ++d) {
    const long c = lround(cells * size[d] / longest);
    n[d] = (c < 1 ? 1 : c) + 1;
    lo[d] = -0.5 * size[d], hi[d] = 0.5 * size[d];
  }
  PetscCall(pbng_generate_box(n, lo, hi, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "box %gx%gx%g of %dx%dx%d cells", size[0], size[1], size[2], (int)n[0] - 1, (int)n[1] - 1, (int)n[2] - 1);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_ball(double radius, int cells, pbng_mesh *mesh)
{
  const int n = pbng_shape_even_cells(cells);
  const mapped_grid g = {.cells = {n, n, n}, .mirror = {1, 1, 1}, .param = {radius}, .map = map_ball};
  char what[64];

  PetscFunctionBeginUser;
  PetscCall(check_shape("ball", cells, 1, &radius));
  snprintf(what, sizeof(what), "ball r %g, %d cells across", radius, n);
  PetscCall(generate_mapped_grid(&g, what, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_cylinder(double radius, double height, int cells, pbng_mesh *mesh)
{
  const int n = pbng_shape_even_cells(cells);
  const double size[2] = {radius, height};
  char what[96];

  PetscFunctionBeginUser;
  PetscCall(check_shape("cylinder", cells, 2, size));
  const long layers = lround(n * height / (2 * radius));
  const mapped_grid g = {.cells = {n, n, layers < 1 ? 1 : (int)layers}, .mirror = {1, 1, 0}, .param = {radius, height}, .map = map_cylinder};
  snprintf(what, sizeof(what), "cylinder r %g h %g, %d cells across, %d layers", radius, height, n, g.cells[2]);
  PetscCall(generate_mapped_grid(&g, what, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_join_bodies(int n, pbng_mesh *parts, const char *what, int64_t *first, pbng_mesh *mesh)
{
  int64_t elems = 0;

  PetscFunctionBeginUser;
  first[0] = 0;
  for (int i = 0; i < n; ++i) first[i + 1] = first[i] + parts[i].nnodes, elems += parts[i].nelems;
  PetscCheck(first[n] < INT32_MAX && elems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes and %" PRId64 " tetrahedra (at most 2^31 - 1 each)", what, first[n], elems);
  PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TET4, first[n], elems));
  elems = 0;
  for (int i = 0; i < n; ++i) {
    PetscCall(PetscArraycpy(&mesh->X[3 * first[i]], parts[i].X, 3 * parts[i].nnodes));
    for (int64_t k = 0; k < 4 * parts[i].nelems; ++k) mesh->elems[4 * elems + k] = parts[i].elems[k] + (int32_t)first[i];
    elems += parts[i].nelems;
    PetscCall(pbng_mesh_destroy(&parts[i]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_torus(double major, double minor, int cells, pbng_mesh *mesh)
{
  const int n = pbng_shape_even_cells(cells);
  const double size[2] = {major, minor};
  char what[96];

  PetscFunctionBeginUser;
  PetscCall(check_shape("torus", cells, 2, size));
  PetscCheck(major > minor, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "torus: the major radius %g must exceed the minor radius %g", major, minor);
  const mapped_grid g = {.cells = {n, n, pbng_torus_segments(major, minor, cells)}, .mirror = {1, 1, 0}, .periodic = 1, .param = {major, minor},
                         .map = map_torus};
  snprintf(what, sizeof(what), "torus R %g r %g, %d cells across, %d segments", major, minor, n, g.cells[2]);
  PetscCall(generate_mapped_grid(&g, what, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sheet_cylinder(double radius, double length, int64_t around, int64_t along, pbng_sheet *s)
{
  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCheck(around >= 3 && along >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "cylinder sheet: %" PRId64 " vertices around, %" PRId64 " along (need at least 3 around and 2 along)", around, along);
  PetscCheck(radius > 0 && length > 0 && isfinite(radius) && isfinite(length), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "cylinder sheet: radius %g, length %g (must be positive)", radius, length);
  s->nnodes = around * along, s->ntri = 2 * around * (along - 1);
  PetscCall(PetscCalloc1(3 * s->nnodes, &s->X));
  PetscCall(PetscCalloc1(s->ntri, &s->tri));
  for (int64_t j = 0; j < along; ++j)
    for (int64_t i = 0; i < around; ++i) {
      const double t = 2 * PETSC_PI * (double)i / (double)around;
      double *X = &s->X[3 * (i + around * j)];
      X[0] = length * ((double)j / (double)(along - 1)), X[1] = radius * cos(t), X[2] = radius * sin(t);
    }
  int64_t t = 0;
  for (int64_t j = 0; j + 1 < along; ++j)
    for (int64_t i = 0; i < around; ++i) {
      /* counter-clockwise about (d/dangle) x (d/dx), the outward normal */
      const int64_t a = i + around * j, b = (i + 1) % around + around * j, c = b + around, d = a + around;
      pbng_sheet_cell_triangles(s->tri, &t, a, b, c, d, (i + j) % 2 == 0);
    }
  PetscErrorCode ierr = pbng_sheet_build_stencils(s);
  if (ierr) PetscCall(pbng_sheet_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The icosahedron: vertices (0, +-1, +-t) cyclically, t the golden ratio; faces counter-clockwise seen from outside. */
static const double ico_vertex[12][3] = {{-1, 1.618033988749895, 0}, {1, 1.618033988749895, 0}, {-1, -1.618033988749895, 0}, {1, -1.618033988749895, 0},
                                         {0, -1, 1.618033988749895}, {0, 1, 1.618033988749895}, {0, -1, -1.618033988749895}, {0, 1, -1.618033988749895},
                                         {1.618033988749895, 0, -1}, {1.618033988749895, 0, 1}, {-1.618033988749895, 0, -1}, {-1.618033988749895, 0, 1}};
static const int ico_face[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                    {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};

/* The midpoint vertex of edge (a, b) on the unit sphere: found in the open-addressing table key/val (size cap, a power
 * of two), or made as vertex *nv. */
static int64_t ico_midpoint(int64_t a, int64_t b, double *X, int64_t *nv, int64_t *key, int64_t *val, int64_t cap)
{
  const int64_t lo = a < b ? a : b, hi = a < b ? b : a, k = lo * 4194304 + hi + 1; /* < 2^22 vertices */
  int64_t h = (int64_t)(((uint64_t)k * 11400714819323198485ull) >> 20) & (cap - 1);
  while (key[h] && key[h] != k) h = (h + 1) & (cap - 1);
  if (key[h]) return val[h];
  double m[3], n = 0;
  for (int d = 0; d < 3; ++d) m[d] = X[3 * a + d] + X[3 * b + d], n += m[d] * m[d];
  n = sqrt(n);
  for (int d = 0; d < 3; ++d) X[3 * *nv + d] = m[d] / n;
  key[h] = k, val[h] = *nv;
  return (*nv)++;
}

PetscErrorCode pbng_sheet_icosphere(double radius, const double center[3], int level, pbng_sheet *s)
{
  int64_t (*tri)[3] = NULL, *key = NULL, *val = NULL;

  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCheck(level >= 0 && level <= 8, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "icosphere: level %d (need 0..8)", level);
  PetscCheck(radius > 0 && isfinite(radius), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "icosphere: radius %g (must be positive)", radius);
  const int64_t nv_final = 10 * ((int64_t)1 << (2 * level)) + 2, nt_final = 20 * ((int64_t)1 << (2 * level));
  PetscCall(PetscCalloc1(3 * nv_final, &s->X));
  PetscCall(PetscCalloc1(nt_final, &s->tri));
  PetscCall(PetscCalloc1(nt_final, &tri));
  int64_t nv = 12, nt = 20;
  for (int v = 0; v < 12; ++v) {
    const double n = sqrt(ico_vertex[v][0] * ico_vertex[v][0] + ico_vertex[v][1] * ico_vertex[v][1] + ico_vertex[v][2] * ico_vertex[v][2]);
    for (int d = 0; d < 3; ++d) s->X[3 * v + d] = ico_vertex[v][d] / n;
  }
  for (int f = 0; f < 20; ++f)
    for (int k = 0; k < 3; ++k) s->tri[f][k] = ico_face[f][k];
  int64_t cap = 64;
  while (cap < 4 * nt_final) cap *= 2; /* edges of the finest level < 1.5 nt: load below 0.4 */
  PetscCall(PetscCalloc2(cap, &key, cap, &val));
  for (int l = 0; l < level; ++l) {
    for (int64_t h = 0; h < cap; ++h) key[h] = 0;
    int64_t n = 0;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t a = s->tri[t][0], b = s->tri[t][1], c = s->tri[t][2];
      const int64_t ab = ico_midpoint(a, b, s->X, &nv, key, val, cap), bc = ico_midpoint(b, c, s->X, &nv, key, val, cap),
                    ca = ico_midpoint(c, a, s->X, &nv, key, val, cap);
      const int64_t split[4][3] = {{a, ab, ca}, {b, bc, ab}, {c, ca, bc}, {ab, bc, ca}};
      for (int q = 0; q < 4; ++q, ++n)
        for (int k = 0; k < 3; ++k) tri[n][k] = split[q][k];
    }
    nt = n;
    for (int64_t t = 0; t < nt; ++t)
      for (int k = 0; k < 3; ++k) s->tri[t][k] = tri[t][k];
  }
  PetscCall(PetscFree2(key, val));
  PetscCall(PetscFree(tri));
  for (int64_t v = 0; v < nv; ++v)
    for (int d = 0; d < 3; ++d) s->X[3 * v + d] = center[d] + radius * s->X[3 * v + d];
  s->nnodes = nv, s->ntri = nt;
  PetscErrorCode ierr = pbng_sheet_build_stencils(s);
  if (ierr) PetscCall(pbng_sheet_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sheet_merge(const pbng_sheet *a, const pbng_sheet *b, pbng_sheet *s)
{
  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  s->nnodes = a->nnodes + b->nnodes, s->ntri = a->ntri + b->ntri;
  PetscCall(PetscCalloc1(3 * s->nnodes, &s->X));
  PetscCall(PetscCalloc1(s->ntri, &s->tri));
  for (int64_t k = 0; k < 3 * a->nnodes; ++k) s->X[k] = a->X[k];
  for (int64_t k = 0; k < 3 * b->nnodes; ++k) s->X[3 * a->nnodes + k] = b->X[k];
  for (int64_t t = 0; t < a->ntri; ++t)
    for (int k = 0; k < 3; ++k) s->tri[t][k] = a->tri[t][k];
  for (int64_t t = 0; t < b->ntri; ++t)
    for (int k = 0; k < 3; ++k) s->tri[a->ntri + t][k] = b->tri[t][k] + a->nnodes;
  PetscErrorCode ierr = pbng_sheet_build_stencils(s);
  if (ierr) PetscCall(pbng_sheet_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
