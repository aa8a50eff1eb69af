#include "mesh/sheet_groups.h"
#include <string.h>

/* The table entry of a stencil between materials a < b (of n + 1). */
static int pair_entry(int n, int a, int b) { return (n + 1) + a * (2 * (n + 1) - a - 1) / 2 + (b - a - 1); }

void pbng_sheet_table_build(const pbng_sheet_material *base, int n, const pbng_sheet_material *groups, pbng_sheet_material *table)
{
  table[0] = *base;
  for (int g = 0; g < n; ++g) table[1 + g] = groups[g];
  for (int a = 0; a <= n; ++a)
    for (int b = a + 1; b <= n; ++b) {
      pbng_sheet_material *m = &table[pair_entry(n, a, b)];
      *m = table[a];
      m->bending_stiffness = 0.5 * (table[a].bending_stiffness + table[b].bending_stiffness);
    }
}

/* Whether node i is in the sorted set. */
static int in_set(const pbng_node_set *set, int32_t i)
{
  int64_t lo = 0, hi = set->count - 1;
  while (lo <= hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (set->nodes[mid] == i) return 1;
    if (set->nodes[mid] < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/* The material (0: the run's, 1 + g: group g) of the triangle with corners c; -1 - g when it lies in
 * group g and an earlier one (*first: that earlier one). */
static int triangle_material(int n, const pbng_node_set *const *sets, int32_t c0, int32_t c1, int32_t c2, int *first)
{
  int found = 0;
  for (int g = 0; g < n; ++g)
    if (in_set(sets[g], c0) && in_set(sets[g], c1) && in_set(sets[g], c2)) {
      if (found) return *first = found - 1, -1 - g;
      found = 1 + g;
    }
  return found;
}

PetscErrorCode pbng_sheet_groups_assign(const pbng_mesh *mesh, int n, const char *const *names, const int64_t *global_elem, uint8_t *material,
                                        int64_t *counts)
{
  const pbng_node_set *sets[16];

  PetscFunctionBeginUser;
  PetscCheck(n >= 0 && n <= 16 && pbng_sheet_table_size(n) <= 256, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "sheet groups: %d groups (at most 16)", n);
  for (int g = 0; g < n; ++g) {
    sets[g] = pbng_mesh_find_node_set(mesh, names[g]);
    PetscCheck(sets[g], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet group %s: %s has no node set (physical group) named \"%s\"", names[g], mesh->source,
               names[g]);
    counts[g] = 0;
  }
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const pbng_element_kind kind = pbng_mesh_element_type(mesh, e)->kind;
    const int32_t *row = &mesh->elems[e * mesh->nen];
    int m[2] = {0, 0}, first = 0;
    material[e] = 0;
    if (kind != PBNG_ELEMENT_TRI3 && kind != PBNG_ELEMENT_BEND4) continue;
    m[0] = triangle_material(n, sets, row[0], row[1], row[2], &first);
    if (kind == PBNG_ELEMENT_BEND4) m[1] = triangle_material(n, sets, row[0], row[1], row[3], &first);
    for (int t = 0; t < 2; ++t)
      PetscCheck(m[t] >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sheet groups: element %" PRId64 " (%s) has a triangle in two groups, %s and %s",
                 global_elem ? global_elem[e] : e, pbng_mesh_element_type(mesh, e)->name, names[first], names[-1 - m[t]]);
    if (kind == PBNG_ELEMENT_TRI3) {
      material[e] = (uint8_t)m[0];
      if (m[0] > 0) ++counts[m[0] - 1];
    } else
      material[e] = (uint8_t)(m[0] == m[1] ? m[0] : pair_entry(n, m[0] < m[1] ? m[0] : m[1], m[0] < m[1] ? m[1] : m[0]));
  }
  PetscFunctionReturn(0);
}
