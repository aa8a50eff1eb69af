#include "mesh/mesh.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

PetscErrorCode pbng_mesh_alloc(pbng_mesh *mesh, pbng_element_kind kind, int64_t nnodes, int64_t nelems)
{
  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  mesh->etype = pbng_element_type_get(kind);
  PetscCheck(nnodes > 0 && nnodes <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "mesh: %" PRId64 " nodes is outside 1..2^31-1", nnodes);
  PetscCheck(nelems > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mesh: no elements");
  mesh->nnodes = nnodes;
  mesh->nelems = nelems;
  PetscCall(PetscMalloc1((size_t)nnodes * 3, &mesh->X));
  PetscCall(PetscMalloc1((size_t)nelems * mesh->etype->nodes, &mesh->elems));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_destroy(pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(mesh->X));
  PetscCall(PetscFree(mesh->elems));
  for (int s = 0; s < mesh->nsets; ++s) PetscCall(PetscFree(mesh->sets[s].nodes));
  PetscCall(PetscFree(mesh->sets));
  PetscCall(PetscFree(mesh->weak));
  memset(mesh, 0, sizeof(*mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_add_weak_constraints(pbng_mesh *mesh, int64_t n, const pbng_weak_constraint *c)
{
  PetscFunctionBeginUser;
  if (n <= 0) PetscFunctionReturn(0);
  PetscCall(PetscRealloc(sizeof(pbng_weak_constraint) * (size_t)(mesh->nweak + n), &mesh->weak));
  memcpy(&mesh->weak[mesh->nweak], c, sizeof(pbng_weak_constraint) * (size_t)n);
  mesh->nweak += n;
  PetscFunctionReturn(0);
}

static int compare_int32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

PetscErrorCode pbng_mesh_add_node_set(pbng_mesh *mesh, const char *name, int64_t count, const int32_t *nodes)
{
  pbng_node_set *set;

  PetscFunctionBeginUser;
  PetscCall(PetscRealloc(sizeof(pbng_node_set) * (size_t)(mesh->nsets + 1), &mesh->sets));
  set = &mesh->sets[mesh->nsets++];
  memset(set, 0, sizeof(*set));
  PetscCall(PetscStrncpy(set->name, name, sizeof(set->name)));
  PetscCall(PetscMalloc1((size_t)(count > 0 ? count : 1), &set->nodes));
  if (count > 0) memcpy(set->nodes, nodes, sizeof(int32_t) * (size_t)count);
  qsort(set->nodes, (size_t)count, sizeof(int32_t), compare_int32);
  int64_t unique = 0;
  for (int64_t i = 0; i < count; ++i)
    if (unique == 0 || set->nodes[unique - 1] != set->nodes[i]) set->nodes[unique++] = set->nodes[i];
  set->count = unique;
  PetscFunctionReturn(0);
}

const pbng_node_set *pbng_mesh_find_node_set(const pbng_mesh *mesh, const char *name)
{
  for (int s = 0; s < mesh->nsets; ++s)
    if (!strcmp(mesh->sets[s].name, name)) return &mesh->sets[s];
  return NULL;
}

static double tet_longest_edge(const double *X, const int32_t *t)
{
  double h2 = 0.0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double d2 = 0.0;
      for (int k = 0; k < 3; ++k) {
        const double d = X[3 * t[a] + k] - X[3 * t[b] + k];
        d2 += d * d;
      }
      if (d2 > h2) h2 = d2;
    }
  return sqrt(h2);
}

PetscErrorCode pbng_mesh_validate(pbng_mesh *mesh, int64_t record_offset)
{
  const int nen = mesh->etype->nodes;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    for (int k = 0; k < 3; ++k)
      PetscCheck(isfinite(mesh->X[3 * i + k]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: node %" PRId64 " has a non-finite coordinate", mesh->source, i);
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    int32_t *t = &mesh->elems[(size_t)e * nen];
    for (int a = 0; a < nen; ++a)
      PetscCheck(t[a] >= 0 && t[a] < mesh->nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: element %" PRId64 " (record %" PRId64 ") references node %d, outside 0..%" PRId64,
                 mesh->source, e, e + record_offset, (int)t[a], mesh->nnodes - 1);
    if (mesh->etype->kind != PBNG_ELEMENT_TET4) continue;
    double V = pbng_tet_signed_volume(&mesh->X[3 * t[0]], &mesh->X[3 * t[1]], &mesh->X[3 * t[2]],
                                      &mesh->X[3 * t[3]]);
    const double h = tet_longest_edge(mesh->X, t);
    PetscCheck(fabs(V) > 1e-12 * h * h * h && h > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: element %" PRId64 " (record %" PRId64 ", nodes %d %d %d %d) is degenerate: rest volume %g",
               mesh->source, e, e + record_offset, (int)t[0], (int)t[1], (int)t[2], (int)t[3], V);
    if (V < 0) { /* re-orient to positive volume */
      const int32_t tmp = t[2];
      t[2] = t[3];
      t[3] = tmp;
    }
  }
  PetscFunctionReturn(0);
}
