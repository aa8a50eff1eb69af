#include "problem/geometry.h"
#include <string.h>
#include <math.h>
#include "core/hugealloc.h"
#include "core/mat3.h"

/* Open-addressing table from a shape's bits to its index. */
typedef struct {
  int32_t *slot; /* -1: empty */
  uint64_t mask;
} shape_index;

static uint64_t shape_hash(const pbng_tet_shape *s)
{
  uint64_t h = 0x9e3779b97f4a7c15ull, w[10];
  memcpy(w, s, sizeof(w));
  for (int k = 0; k < 10; ++k) h = (h ^ w[k]) * 0x100000001b3ull, h ^= h >> 29;
  return h;
}

/* The index of a shape bitwise equal to s, adding s to the table when it is new. */
static int32_t shape_lookup_or_add(shape_index *idx, pbng_geometry *geo, const pbng_tet_shape *s)
{
  for (uint64_t h = shape_hash(s) & idx->mask;; h = (h + 1) & idx->mask) {
    const int32_t k = idx->slot[h];
    if (k < 0) {
      geo->shapes[geo->nshapes] = *s;
      idx->slot[h] = geo->nshapes;
      return geo->nshapes++;
    }
    if (!memcmp(&geo->shapes[k], s, sizeof(*s))) return k;
  }
}

static PetscErrorCode shrink_shape_table(pbng_geometry *geo)
{
  pbng_tet_shape *shapes;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(geo->nshapes + 1, &shapes)); /* + 1: no shape on a rank without a part of a level */
  memcpy(shapes, geo->shapes, sizeof(*shapes) * (size_t)geo->nshapes);
  PetscCall(PetscFree(geo->shapes));
  geo->shapes = shapes;
  PetscFunctionReturn(0);
}

/* The rest positions of element e's nodes. */
static void element_rest_nodes(const pbng_dmesh *dm, int32_t e, double (*X)[3])
{
  const int32_t *t = &dm->elems[(int64_t)dm->nen * e];
  for (int a = 0, n = pbng_row_nodes(t, dm->nen); a < n; ++a) memcpy(X[a], &dm->X[3 * (int64_t)t[a]], sizeof(X[a]));
}

/* Whether J = sum_a X_a (x) dN_a/dr is the same at every quadrature point (to 1e-12 relative); J_0 out. */
static int element_is_affine(const pbng_element_reference *ref, const double (*X)[3], double J0[9])
{
  const int nen = ref->type->nodes;
  double scale = 0.0, diff = 0.0;
  for (int q = 0; q < ref->nq; ++q) {
    double J[9] = {0};
    for (int a = 0; a < nen; ++a)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) J[3 * i + j] += X[a][i] * ref->dN[q][a][j];
    for (int k = 0; k < 9; ++k) {
      if (q == 0) J0[k] = J[k], scale = fmax(scale, fabs(J[k]));
      diff = fmax(diff, fabs(J[k] - J0[k]));
    }
  }
  return diff <= 1e-12 * scale;
}

/* The reference data: the one kind's, or one per kind present when kinds mix (geo->kind set);
 * geo->nen, geo->nq the row width and the most quadrature points. */
static PetscErrorCode init_references(const pbng_dmesh *dm, pbng_geometry *geo)
{
  PetscFunctionBeginUser;
  geo->nen = dm->nen, geo->nelems = dm->nelems;
  if (dm->etype) {
    PetscCall(PetscNew(&geo->ref));
    pbng_element_reference_init(dm->etype, geo->ref);
    geo->nq = geo->ref->nq;
    PetscFunctionReturn(0);
  }
  const unsigned kinds = pbng_element_kinds_mask(NULL, dm->kind, dm->nelems);
  PetscCall(PetscCalloc1(PBNG_ELEMENT_KIND_COUNT, &geo->ref));
  geo->kind = dm->kind;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) {
    if (!(kinds & (1u << k))) continue;
    pbng_element_reference_init(pbng_element_type_get((pbng_element_kind)k), &geo->ref[k]);
    geo->nq = PetscMax(geo->nq, geo->ref[k].nq);
  }
  PetscFunctionReturn(0);
}

/* A cloth6 stencil's rest data from its row (node 3 + i equal to corner i: edge i is free) and rest positions. */
static int cloth_rest(const int32_t *row, const double (*X)[3], const double weft[3], pbng_gpbd_cloth_rest *r)
{
  const int neighbour[3] = {row[3] != row[0], row[4] != row[1], row[5] != row[2]};
  return pbng_gpbd_cloth_rest_shape(X, neighbour, weft, r);
}

/* The sheet kinds' rest data (geo->sheet, allocated when the mesh has any): each tri3's membrane frame
 * (core/membrane, weft projected onto it) and each bend4's cotangent weights (core/bending). */
static PetscErrorCode sheet_geometry_create(const pbng_dmesh *dm, const double weft[3], pbng_geometry *geo)
{
  double X[PBNG_MAX_ELEMENT_NODES][3];
  const double none[3] = {1, 0, 0};

  PetscFunctionBeginUser;
  if (!(pbng_element_kinds_mask(dm->etype, dm->kind, dm->nelems) & PBNG_SHEET_KINDS_MASK)) PetscFunctionReturn(0);
  PetscCall(PetscCalloc1(dm->nelems + 1, &geo->sheet));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const pbng_element_type *t = pbng_dmesh_element_type(dm, e);
    if (!pbng_element_is_sheet(t)) continue;
    element_rest_nodes(dm, e, X);
    const int bad = t->kind == PBNG_ELEMENT_TRI3    ? pbng_membrane_rest_shape((const double(*)[3])X, weft ? weft : none, &geo->sheet[e].membrane)
                    : t->kind == PBNG_ELEMENT_CLOTH6 ? cloth_rest(&dm->elems[(int64_t)dm->nen * e], (const double(*)[3])X, weft ? weft : none, &geo->sheet[e].cloth)
                                                     : pbng_bending_rest((const double(*)[3])X, &geo->sheet[e].bending);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "element %" PRId64 " (%s) is degenerate: a triangle of zero area", dm->global_elem[e], t->name);
  }
  PetscFunctionReturn(0);
}

/* Seed Alg. 3 for every element of a kind other than the linear tetrahedron (every element when kinds
 * mix): validates each and stores J^{-1}, det J (every element affine) or V_q and dN/dX per quadrature point.
 * Sheet kinds are skipped (sheet_geometry_create). */
static PetscErrorCode quadrature_geometry_create(const pbng_dmesh *dm, pbng_geometry *geo)
{
  double X[PBNG_MAX_ELEMENT_NODES][3], grad[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], V[PBNG_MAX_QUAD_POINTS], J[9], det_min;

  PetscFunctionBeginUser;
  PetscCall(init_references(dm, geo));
  geo->affine = 1;
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
    if (pbng_element_is_sheet(ref->type)) continue;
    element_rest_nodes(dm, e, X);
    const int bad = pbng_element_precompute(ref, (const double(*)[3])X, V, grad, &det_min);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "element %" PRId64 " (%s) is inverted or degenerate: min det J %g at its quadrature points",
               dm->global_elem[e], ref->type->name, det_min);
    geo->affine &= element_is_affine(ref, (const double(*)[3])X, J);
  }
  if (geo->affine) {
    PetscCall(PetscMalloc1((size_t)10 * (dm->nelems + 1), &geo->jinv));
    for (int32_t e = 0; e < dm->nelems; ++e) {
      if (pbng_element_is_sheet(pbng_geometry_ref(geo, e)->type)) continue;
      element_rest_nodes(dm, e, X);
      (void)element_is_affine(pbng_geometry_ref(geo, e), (const double(*)[3])X, J);
      geo->jinv[10 * (int64_t)e + 9] = mat3_inverse(J, &geo->jinv[10 * (int64_t)e]);
    }
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc2((size_t)geo->nq * (dm->nelems + 1), &geo->qV, (size_t)3 * geo->nen * geo->nq * (dm->nelems + 1), &geo->qgrad));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
    const int nen = ref->type->nodes;
    if (pbng_element_is_sheet(ref->type)) continue;
    element_rest_nodes(dm, e, X);
    (void)pbng_element_precompute(ref, (const double(*)[3])X, &geo->qV[(int64_t)geo->nq * e], grad, &det_min);
    double *block = &geo->qgrad[3 * (int64_t)geo->nen * geo->nq * e]; /* pbng_geometry_gradients(geo, e) */
    for (int q = 0; q < ref->nq; ++q) memcpy(&block[3 * nen * q], grad[q], sizeof(double) * 3 * nen);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_geometry_create(const pbng_dmesh *dm, const double weft[3], pbng_geometry *geo)
{
  shape_index idx;
  uint64_t size = 16;

  PetscFunctionBeginUser;
  memset(geo, 0, sizeof(*geo));
  if (!dm->etype || dm->etype->kind != PBNG_ELEMENT_TET4) {
    PetscCall(quadrature_geometry_create(dm, geo));
    PetscCall(sheet_geometry_create(dm, weft, geo));
    PetscFunctionReturn(0);
  }
  geo->nen = 4, geo->nq = 1;
  geo->nelems = dm->nelems;
  geo->records = pbng_huge_alloc(sizeof(pbng_tet_record) * (size_t)dm->nelems);
  PetscCheck(geo->records, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %d element records", (int)dm->nelems);
  PetscCall(PetscMalloc1(dm->nelems > 0 ? dm->nelems : 1, &geo->shapes));
  while (size < 2 * (uint64_t)dm->nelems) size *= 2;
  idx.mask = size - 1;
  PetscCall(PetscMalloc1(size, &idx.slot));
  for (uint64_t k = 0; k < size; ++k) idx.slot[k] = -1;
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int32_t *t = &dm->elems[4 * e];
    pbng_tet_shape s;
    s.V = pbng_tet_rest_shape(&dm->X[3 * t[0]], &dm->X[3 * t[1]], &dm->X[3 * t[2]], &dm->X[3 * t[3]], s.B);
    PetscCheck(s.V > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "element %" PRId64 " has non-positive rest volume %g",
               dm->global_elem[e], s.V);
    memcpy(geo->records[e].node, t, sizeof(geo->records[e].node));
    geo->records[e].shape = shape_lookup_or_add(&idx, geo, &s);
  }
  PetscCall(PetscFree(idx.slot));
  PetscCall(shrink_shape_table(geo));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_geometry_destroy(pbng_geometry *geo)
{
  PetscFunctionBeginUser;
  pbng_huge_free(geo->records, sizeof(pbng_tet_record) * (size_t)geo->nelems);
  PetscCall(PetscFree(geo->shapes));
  PetscCall(PetscFree(geo->ref));
  PetscCall(PetscFree2(geo->qV, geo->qgrad));
  PetscCall(PetscFree(geo->jinv));
  PetscCall(PetscFree(geo->sheet));
  memset(geo, 0, sizeof(*geo));
  PetscFunctionReturn(0);
}
