#include "parallel/coloring.h"
#include <string.h>

PetscErrorCode pbng_node_elements_build(const pbng_mesh *mesh, pbng_node_elements *adj)
{
  const int nen = mesh->etype->nodes;
  int64_t *fill;

  PetscFunctionBeginUser;
  PetscCheck(mesh->nelems <= INT32_MAX / nen, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s: %" PRId64 " elements exceed the node-element adjacency's int32 range", mesh->source, mesh->nelems);
  adj->nnodes = mesh->nnodes;
  PetscCall(PetscCalloc1(mesh->nnodes + 1, &adj->start));
  PetscCall(PetscMalloc1(mesh->nelems * nen, &adj->entry));
  for (int64_t k = 0; k < mesh->nelems * nen; ++k) adj->start[mesh->elems[k] + 1]++;
  for (int64_t i = 0; i < mesh->nnodes; ++i) adj->start[i + 1] += adj->start[i];
  PetscCall(PetscMalloc1(mesh->nnodes, &fill));
  memcpy(fill, adj->start, sizeof(int64_t) * mesh->nnodes);
  for (int64_t e = 0; e < mesh->nelems; ++e) /* element order, so each list is sorted */
    for (int a = 0; a < nen; ++a) adj->entry[fill[mesh->elems[e * nen + a]]++] = (int32_t)(nen * e + a);
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_node_elements_destroy(pbng_node_elements *adj)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(adj->start));
  PetscCall(PetscFree(adj->entry));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_color_nodes(const pbng_mesh *mesh, const pbng_node_elements *adj, int32_t *color, int *ncolors)
{
  const int nen = mesh->etype->nodes;
  uint64_t *used; /* S_e: colors used by element e's nodes */
  int maxc = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(mesh->nelems, &used));
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    uint64_t taken = 0;
    for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k) taken |= used[adj->entry[k] / nen];
    PetscCheck(~taken != 0, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "%s: node %" PRId64 " would need more than 64 colors", mesh->source, i);
    const int c = __builtin_ctzll(~taken);
    color[i] = c;
    if (c + 1 > maxc) maxc = c + 1;
    for (int64_t k = adj->start[i]; k < adj->start[i + 1]; ++k) used[adj->entry[k] / nen] |= 1ull << c;
  }
  PetscCall(PetscFree(used));
  *ncolors = maxc;
  PetscFunctionReturn(0);
}

int pbng_coloring_is_valid(const pbng_mesh *mesh, const int32_t *color)
{
  const int nen = mesh->etype->nodes;
  for (int64_t e = 0; e < mesh->nelems; ++e)
    for (int a = 0; a < nen; ++a)
      for (int b = a + 1; b < nen; ++b)
        if (color[mesh->elems[e * nen + a]] == color[mesh->elems[e * nen + b]]) return 0;
  return 1;
}
