#include "mesh/sheet.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/vec3.h"

/* An edge occurrence: its corners sorted (a < b), the triangle and whether it runs a -> b. */
typedef struct {
  int64_t a, b, tri;
  int forward;
  int pad;
} edge_use;

static int compare_uses(const void *p, const void *q)
{
  const edge_use *x = p, *y = q;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  return (x->tri > y->tri) - (x->tri < y->tri);
}

/* The corner of triangle t that is neither a nor b. */
static int64_t third_corner(const int64_t t[3], int64_t a, int64_t b)
{
  for (int k = 0; k < 3; ++k)
    if (t[k] != a && t[k] != b) return t[k];
  return -1;
}

static PetscErrorCode collect_edge_uses(const pbng_sheet *s, edge_use *u)
{
  PetscFunctionBeginUser;
  for (int64_t t = 0; t < s->ntri; ++t) {
    const int64_t *c = s->tri[t];
    for (int k = 0; k < 3; ++k) {
      PetscCheck(c[k] >= 0 && c[k] < s->nnodes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "sheet: triangle %" PRId64 " has corner %" PRId64 " outside [0, %" PRId64 ")",
                 t, c[k], s->nnodes);
      PetscCheck(c[k] != c[(k + 1) % 3], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet: triangle %" PRId64 " repeats corner %" PRId64, t, c[k]);
    }
    for (int k = 0; k < 3; ++k) {
      const int64_t p = c[k], q = c[(k + 1) % 3];
      u[3 * t + k] = (edge_use){.a = p < q ? p : q, .b = p < q ? q : p, .tri = t, .forward = p < q};
    }
  }
  PetscFunctionReturn(0);
}

/* The stencils from the sorted edge uses u[0 .. 3 ntri) into s->stencil (allocated by the caller). */
static PetscErrorCode stencils_from_uses(pbng_sheet *s, const edge_use *u)
{
  int64_t n = 0;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < 3 * s->ntri;) {
    int64_t m = k + 1;
    while (m < 3 * s->ntri && u[m].a == u[k].a && u[m].b == u[k].b) ++m;
    PetscCheck(m - k <= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet: edge %" PRId64 "-%" PRId64 " belongs to %" PRId64 " triangles (non-manifold)", u[k].a, u[k].b,
               m - k);
    if (m - k == 2) {
      PetscCheck(u[k].forward != u[k + 1].forward, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
                 "sheet: triangles %" PRId64 " and %" PRId64 " run their shared edge %" PRId64 "-%" PRId64 " the same way (inconsistent orientation)", u[k].tri, u[k + 1].tri,
                 u[k].a, u[k].b);
      const edge_use *f = u[k].forward ? &u[k] : &u[k + 1], *g = u[k].forward ? &u[k + 1] : &u[k]; /* f runs a -> b */
      int64_t *st = s->stencil[n++];
      st[0] = f->a, st[1] = f->b, st[2] = third_corner(s->tri[f->tri], f->a, f->b), st[3] = third_corner(s->tri[g->tri], f->a, f->b);
    }
    k = m;
  }
  s->nstencil = n;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sheet_build_stencils(pbng_sheet *s)
{
  edge_use *u;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->stencil));
  s->nstencil = 0;
  PetscCall(PetscMalloc1(3 * s->ntri + 1, &u));
  PetscErrorCode ierr = collect_edge_uses(s, u);
  if (!ierr) {
    qsort(u, (size_t)(3 * s->ntri), sizeof(*u), compare_uses);
    ierr = PetscMalloc1(3 * s->ntri / 2 + 1, &s->stencil); /* at most one per pair of edge uses */
  }
  if (!ierr) ierr = stencils_from_uses(s, u);
  PetscCall(PetscFree(u)); /* also when a check failed */
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sheet_grid(int64_t nx, int64_t ny, double lx, double ly, const double o[3], const double e_u[3], const double e_v[3], pbng_sheet *s)
{
  double cr[3];

  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  vec3_cross(e_u, e_v, cr);
  PetscCheck(nx >= 2 && ny >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "sheet: %" PRId64 " x %" PRId64 " vertices (need at least 2 along each side)", nx, ny);
  PetscCheck(lx > 0 && ly > 0 && isfinite(lx) && isfinite(ly), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "sheet: size %g x %g (must be positive)", lx, ly);
  PetscCheck(vec3_norm(cr) > 1e-12 * vec3_norm(e_u) * vec3_norm(e_v) && vec3_norm(e_u) > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet: the directions e_u and e_v are zero or parallel");
  double u[3], v[3];
  for (int k = 0; k < 3; ++k) u[k] = e_u[k] / vec3_norm(e_u), v[k] = e_v[k] / vec3_norm(e_v);
  s->nnodes = nx * ny, s->ntri = 2 * (nx - 1) * (ny - 1);
  PetscCall(PetscMalloc1(3 * s->nnodes, &s->X));
  PetscCall(PetscMalloc1(s->ntri, &s->tri));
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i)
      for (int k = 0; k < 3; ++k) s->X[3 * (i + nx * j) + k] = o[k] + lx * (double)i / (double)(nx - 1) * u[k] + ly * (double)j / (double)(ny - 1) * v[k];
  int64_t t = 0;
  for (int64_t j = 0; j + 1 < ny; ++j)
    for (int64_t i = 0; i + 1 < nx; ++i) {
      const int64_t a = i + nx * j, b = a + 1, c = a + nx + 1, d = a + nx; /* counter-clockwise about u x v */
      pbng_sheet_cell_triangles(s->tri, &t, a, b, c, d, (i + j) % 2 == 0);
    }
  PetscCall(pbng_sheet_build_stencils(s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_sheet_destroy(pbng_sheet *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->X));
  PetscCall(PetscFree(s->tri));
  PetscCall(PetscFree(s->stencil));
  memset(s, 0, sizeof(*s));
  PetscFunctionReturn(0);
}

/* Rows of width nen: the tri3 rows of the triangles, then the stencils' bend4 rows, padded with -1. */
static void fill_sheet_rows(const pbng_sheet *s, int nen, int64_t first, pbng_mesh *mesh)
{
  for (int64_t t = 0; t < s->ntri + s->nstencil; ++t) {
    int32_t *row = &mesh->elems[(size_t)nen * (size_t)(first + t)];
    const int64_t *c = t < s->ntri ? s->tri[t] : s->stencil[t - s->ntri];
    const int n = t < s->ntri ? 3 : 4;
    for (int a = 0; a < nen; ++a) row[a] = a < n ? (int32_t)c[a] : -1;
    if (mesh->kind) mesh->kind[first + t] = (uint8_t)(t < s->ntri ? PBNG_ELEMENT_TRI3 : PBNG_ELEMENT_BEND4);
  }
}

PetscErrorCode pbng_mesh_from_sheet(const pbng_sheet *s, int with_bending, pbng_mesh *mesh)
{
  pbng_sheet tris = *s;

  PetscFunctionBeginUser;
  if (!with_bending) tris.nstencil = 0;
  if (tris.nstencil) PetscCall(pbng_mesh_alloc_mixed(mesh, 4, s->nnodes, s->ntri + tris.nstencil));
  else PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TRI3, s->nnodes, s->ntri));
  memcpy(mesh->X, s->X, sizeof(double) * 3 * (size_t)s->nnodes);
  fill_sheet_rows(&tris, mesh->nen, 0, mesh);
  PetscFunctionReturn(0);
}

/* The mesh's tri3 elements as a sheet (corners only, no positions); *has_stencils: bend4 rows exist. */
static PetscErrorCode mesh_triangles(const pbng_mesh *mesh, pbng_sheet *s, int *has_stencils)
{
  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  s->nnodes = mesh->nnodes;
  *has_stencils = 0;
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const pbng_element_kind k = pbng_mesh_element_type(mesh, e)->kind;
    s->ntri += k == PBNG_ELEMENT_TRI3, *has_stencils |= k == PBNG_ELEMENT_BEND4;
  }
  if (!s->ntri || *has_stencils) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(s->ntri, &s->tri));
  for (int64_t e = 0, t = 0; e < mesh->nelems; ++e)
    if (pbng_mesh_element_type(mesh, e)->kind == PBNG_ELEMENT_TRI3) {
      for (int a = 0; a < 3; ++a) s->tri[t][a] = mesh->elems[(size_t)mesh->nen * (size_t)e + a];
      ++t;
    }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_add_bending_stencils(pbng_mesh *mesh)
{
  pbng_sheet s;
  int has_stencils;

  PetscFunctionBeginUser;
  PetscCall(mesh_triangles(mesh, &s, &has_stencils));
  PetscErrorCode ierr = s.ntri && !has_stencils ? pbng_sheet_build_stencils(&s) : 0;
  if (!ierr && s.nstencil) {
    const int nen = PetscMax(mesh->nen, 4);
    int32_t *rows = NULL;
    uint8_t *kind = NULL;
    ierr = PetscMalloc1((size_t)nen * (size_t)(mesh->nelems + s.nstencil), &rows);
    if (!ierr) ierr = PetscMalloc1(mesh->nelems + s.nstencil, &kind);
    if (!ierr) {
      for (int64_t e = 0; e < mesh->nelems; ++e) {
        for (int a = 0; a < nen; ++a) rows[(size_t)nen * (size_t)e + a] = a < mesh->nen ? mesh->elems[(size_t)mesh->nen * (size_t)e + a] : -1;
        kind[e] = (uint8_t)pbng_mesh_element_type(mesh, e)->kind;
      }
      pbng_mesh grown = *mesh;
      grown.elems = rows, grown.kind = kind, grown.nen = nen, grown.etype = NULL;
      s.ntri = 0; /* only the stencils' rows after the existing ones */
      fill_sheet_rows(&s, nen, mesh->nelems, &grown);
      PetscCall(PetscFree(mesh->elems));
      PetscCall(PetscFree(mesh->kind));
      grown.nelems = mesh->nelems + s.nstencil;
      *mesh = grown;
      rows = NULL, kind = NULL;
    }
    PetscCall(PetscFree(rows));
    PetscCall(PetscFree(kind));
  }
  PetscCall(pbng_sheet_destroy(&s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* across[3 t + i]: the vertex across edge i (opposite corner i) of triangle t, or its own corner i on a free edge,
 * from the sorted edge uses u (collect_edge_uses: use k of a triangle runs c[k] -> c[k + 1], edge (k + 2) % 3). */
static PetscErrorCode across_vertices(const pbng_sheet *s, const edge_use *u, int64_t *across)
{
  PetscFunctionBeginUser;
  for (int64_t t = 0; t < s->ntri; ++t)
    for (int i = 0; i < 3; ++i) across[3 * t + i] = s->tri[t][i];
  for (int64_t k = 0; k < 3 * s->ntri;) {
    int64_t m = k + 1;
    while (m < 3 * s->ntri && u[m].a == u[k].a && u[m].b == u[k].b) ++m;
    PetscCheck(m - k <= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet: edge %" PRId64 "-%" PRId64 " belongs to %" PRId64 " triangles (non-manifold)", u[k].a,
               u[k].b, m - k);
    if (m - k == 2) {
      PetscCheck(u[k].forward != u[k + 1].forward, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
                 "sheet: triangles %" PRId64 " and %" PRId64 " run their shared edge %" PRId64 "-%" PRId64 " the same way (inconsistent orientation)", u[k].tri,
                 u[k + 1].tri, u[k].a, u[k].b);
      for (int side = 0; side < 2; ++side) {
        const edge_use *f = &u[k + side], *g = &u[k + 1 - side];
        const int64_t *c = s->tri[f->tri], opposite = third_corner(c, f->a, f->b);
        for (int i = 0; i < 3; ++i)
          if (c[i] == opposite) across[3 * f->tri + i] = third_corner(s->tri[g->tri], f->a, f->b);
      }
    }
    k = m;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_cloth_stencils(pbng_mesh *mesh)
{
  pbng_sheet s;
  int has_stencils;
  edge_use *u = NULL;
  int64_t *across = NULL;
  int32_t *rows = NULL;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const pbng_element_kind k = pbng_mesh_element_type(mesh, e)->kind;
    PetscCheck(k == PBNG_ELEMENT_TRI3 || k == PBNG_ELEMENT_BEND4, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "-sheet_model cloth6: %s has %s elements; the six-dimensional cloth stencils are built for meshes of sheet triangles alone", mesh->source,
               pbng_mesh_element_type(mesh, e)->name);
  }
  memset(&s, 0, sizeof(s));
  s.nnodes = mesh->nnodes;
  PetscCall(mesh_triangles(mesh, &s, &has_stencils));
  if (has_stencils) { /* mesh_triangles counts but leaves the triangles out when stencils exist: collect them here */
    s.ntri = 0;
    for (int64_t e = 0; e < mesh->nelems; ++e) s.ntri += pbng_mesh_element_type(mesh, e)->kind == PBNG_ELEMENT_TRI3;
    PetscCall(PetscMalloc1(s.ntri, &s.tri));
    for (int64_t e = 0, t = 0; e < mesh->nelems; ++e)
      if (pbng_mesh_element_type(mesh, e)->kind == PBNG_ELEMENT_TRI3) {
        for (int a = 0; a < 3; ++a) s.tri[t][a] = mesh->elems[(size_t)mesh->nen * (size_t)e + a];
        ++t;
      }
  }
  PetscErrorCode ierr = PetscMalloc2(3 * s.ntri + 1, &u, 3 * s.ntri + 1, &across);
  if (!ierr) ierr = PetscMalloc1(6 * s.ntri + 1, &rows); /* its own block: it becomes the mesh's */
  if (!ierr) ierr = collect_edge_uses(&s, u);
  if (!ierr) {
    qsort(u, (size_t)(3 * s.ntri), sizeof(*u), compare_uses);
    ierr = across_vertices(&s, u, across);
  }
  if (!ierr) {
    for (int64_t t = 0; t < s.ntri; ++t)
      for (int a = 0; a < 6; ++a) rows[6 * t + a] = (int32_t)(a < 3 ? s.tri[t][a] : across[3 * t + a - 3]);
    PetscCall(PetscFree(mesh->elems));
    PetscCall(PetscFree(mesh->kind));
    mesh->elems = rows, rows = NULL;
    mesh->nelems = s.ntri, mesh->nen = 6, mesh->etype = pbng_element_type_get(PBNG_ELEMENT_CLOTH6);
  }
  PetscCall(PetscFree2(u, across));
  PetscCall(PetscFree(rows));
  PetscCall(pbng_sheet_destroy(&s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
