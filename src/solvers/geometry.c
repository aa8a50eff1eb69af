#include "solvers/geometry.h"
#include <string.h>
#include "core/hugealloc.h"

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
  PetscCall(PetscMalloc1(geo->nshapes, &shapes));
  memcpy(shapes, geo->shapes, sizeof(*shapes) * (size_t)geo->nshapes);
  PetscCall(PetscFree(geo->shapes));
  geo->shapes = shapes;
  PetscFunctionReturn(0);
}

/* Seed Alg. 3 for every element of a kind other than the linear tetrahedron. */
static PetscErrorCode quadrature_geometry_create(const pbng_dmesh *dm, pbng_geometry *geo)
{
  const int nen = dm->etype->nodes;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&geo->ref));
  pbng_element_reference_init(dm->etype, geo->ref);
  geo->nen = nen, geo->nq = geo->ref->nq, geo->nelems = dm->nelems;
  PetscCall(PetscMalloc2((size_t)geo->nq * (dm->nelems + 1), &geo->qV, (size_t)3 * nen * geo->nq * (dm->nelems + 1), &geo->qgrad));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    double X[PBNG_MAX_ELEMENT_NODES][3], grad[PBNG_MAX_QUAD_POINTS][PBNG_MAX_ELEMENT_NODES][3], det_min;
    for (int a = 0; a < nen; ++a) memcpy(X[a], &dm->X[3 * (int64_t)dm->elems[(int64_t)nen * e + a]], sizeof(X[a]));
    const int bad = pbng_element_precompute(geo->ref, (const double(*)[3])X, &geo->qV[(int64_t)geo->nq * e], grad, &det_min);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "element %" PRId64 " (%s) is inverted or degenerate: min det J %g at its quadrature points",
               dm->global_elem[e], dm->etype->name, det_min);
    for (int q = 0; q < geo->nq; ++q) memcpy((double *)pbng_geometry_qp_gradients(geo, e, q), grad[q], sizeof(double) * 3 * nen);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_geometry_create(const pbng_dmesh *dm, pbng_geometry *geo)
{
  shape_index idx;
  uint64_t size = 16;

  PetscFunctionBeginUser;
  memset(geo, 0, sizeof(*geo));
  if (dm->etype->kind != PBNG_ELEMENT_TET4) {
    PetscCall(quadrature_geometry_create(dm, geo));
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
  memset(geo, 0, sizeof(*geo));
  PetscFunctionReturn(0);
}
