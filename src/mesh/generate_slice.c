#include "mesh/generate_slice.h"
#include <stdio.h>
#include <string.h>

int pbng_grid_slice_supported(const pbng_grid_elements *el, char *why, size_t len)
{
  const pbng_element_type *t = pbng_element_type_get(el->kind);
  why[0] = 0;
  if (t->shape == PBNG_SHAPE_TETRAHEDRON && t->order > 1)
    snprintf(why, len, "%s grids leave some grid points unused, so their node ids need the whole grid (tet4, hex8 and hex27 slices are made)",
             t->name);
  else if (t->shape != PBNG_SHAPE_TETRAHEDRON && t->shape != PBNG_SHAPE_HEXAHEDRON) snprintf(why, len, "%s elements are not generated", t->name);
  return !why[0];
}

void pbng_grid_counts(const pbng_grid *g, int64_t *nnodes, int64_t *nelems, int64_t *ncells)
{
  int64_t m[3];
  pbng_grid_fine_dims(g->n, &g->el, m);
  *ncells = (g->n[0] - 1) * (g->n[1] - 1) * (g->n[2] - 1);
  *nelems = pbng_grid_elements_per_cell(&g->el) * *ncells;
  *nnodes = m[0] * m[1] * m[2];
}

PetscErrorCode pbng_grid_slice_create(const pbng_grid *g, int64_t node_begin, int64_t node_end, int64_t cell_begin, int64_t cell_end,
                                      pbng_mesh_slice *s)
{
  const int per_cell = pbng_grid_elements_per_cell(&g->el);
  int64_t m[3], ncells, *rows;
  char why[256];

  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCheck(pbng_grid_slice_supported(&g->el, why, sizeof(why)), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s", g->source, why);
  pbng_grid_counts(g, &s->nglobal_nodes, &s->nglobal_elems, &ncells);
  PetscCheck(s->nglobal_nodes < INT32_MAX && s->nglobal_elems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %" PRId64 " nodes and %" PRId64 " elements (at most 2^31 - 1 each)", g->source, s->nglobal_nodes, s->nglobal_elems);
  PetscCheck(0 <= node_begin && node_begin <= node_end && node_end <= s->nglobal_nodes && 0 <= cell_begin && cell_begin <= cell_end &&
               cell_end <= ncells,
             PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: a slice outside the grid", g->source);
  pbng_grid_fine_dims(g->n, &g->el, m);
  s->etype = pbng_element_type_get(g->el.kind);
  s->nen = s->etype->nodes;
  s->node_begin = node_begin, s->node_end = node_end;
  s->elem_begin = per_cell * cell_begin, s->elem_end = per_cell * cell_end;
  PetscCall(PetscStrncpy(s->source, g->source, sizeof(s->source)));
  PetscCall(PetscMalloc1(3 * (node_end - node_begin) + 1, &s->X));
  for (int64_t i = node_begin; i < node_end; ++i) pbng_grid_point(m, g->lo, g->hi, i, &s->X[3 * (i - node_begin)]);
  PetscCall(PetscMalloc1((s->elem_end - s->elem_begin) * s->nen + 1, &s->elems));
  PetscCall(PetscMalloc1((int64_t)per_cell * s->nen, &rows));
  for (int64_t c = cell_begin; c < cell_end; ++c) {
    const int64_t first = (c - cell_begin) * per_cell * s->nen;
    const int n = pbng_grid_cell_elements(&g->el, g->n, c, rows);
    for (int64_t k = 0; k < (int64_t)n * s->nen; ++k) s->elems[first + k] = (int32_t)rows[k];
  }
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_grid_slice_of_process(const pbng_grid *g, int rank, int size, pbng_mesh_slice *s)
{
  int64_t nnodes, nelems, ncells;

  PetscFunctionBeginUser;
  pbng_grid_counts(g, &nnodes, &nelems, &ncells);
  PetscCall(pbng_grid_slice_create(g, nnodes * rank / size, nnodes * (rank + 1) / size, ncells * rank / size, ncells * (rank + 1) / size, s));
  PetscFunctionReturn(0);
}
