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

/* The grid's boxes: 1, or the stacked blocks' 2 (each with the same nodes and cells). */
static int grid_boxes(const pbng_grid *g) { return g->stacked ? 2 : 1; }

/* Box b's corners: the grid's, or the stacked blocks' b-th. */
static void grid_box(const pbng_grid *g, int b, double lo[3], double hi[3])
{
  double L[2][3], H[2][3];
  if (g->stacked) pbng_stacked_blocks_boxes((int)g->n[0], g->gap, L, H);
  for (int d = 0; d < 3; ++d) lo[d] = g->stacked ? L[b][d] : g->lo[d], hi[d] = g->stacked ? H[b][d] : g->hi[d];
}

/* One box's node, element and cell counts. */
static void box_counts(const pbng_grid *g, int64_t *nnodes, int64_t *nelems, int64_t *ncells)
{
  int64_t m[3];
  pbng_grid_fine_dims(g->n, &g->el, m);
  *ncells = (g->n[0] - 1) * (g->n[1] - 1) * (g->n[2] - 1);
  *nelems = pbng_grid_elements_per_cell(&g->el) * *ncells;
  *nnodes = m[0] * m[1] * m[2];
}

void pbng_grid_counts(const pbng_grid *g, int64_t *nnodes, int64_t *nelems, int64_t *ncells)
{
  box_counts(g, nnodes, nelems, ncells);
  *nnodes *= grid_boxes(g), *nelems *= grid_boxes(g), *ncells *= grid_boxes(g);
}

/* The stacked blocks' node sets of the slice's nodes. */
static PetscErrorCode stacked_sets(const pbng_grid *g, pbng_mesh_slice *s)
{
  char names[3][64];

  PetscFunctionBeginUser;
  for (int t = 0; t < 3; ++t) snprintf(names[t], sizeof(names[t]), "%s", pbng_stacked_blocks_sets[t]);
  PetscCall(pbng_mesh_slice_name_sets(s, 3, (const char(*)[64])names));
  for (int64_t i = s->node_begin; i < s->node_end; ++i)
    for (int t = 0; t < 3; ++t)
      if (pbng_stacked_blocks_node_in_set((int)g->n[0], i, t)) s->set_mask[(i - s->node_begin) * s->set_words] |= (uint64_t)1 << t;
  PetscFunctionReturn(0);
}

/* The stacked blocks' bindings [begin, end) of their res^2 as the slice's weak constraints. */
static PetscErrorCode stacked_bindings(const pbng_grid *g, int64_t begin, int64_t end, pbng_mesh_slice *s)
{
  PetscFunctionBeginUser;
  s->nglobal_weak = g->n[0] * g->n[0], s->weak_begin = begin, s->weak_end = end;
  PetscCall(PetscMalloc1(end - begin + 1, &s->weak));
  for (int64_t q = begin; q < end; ++q) {
    const char *err = pbng_stacked_blocks_binding((int)g->n[0], q, g->bind_k, &s->weak[q - begin]);
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s", g->source, err);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_grid_slice_create(const pbng_grid *g, int64_t node_begin, int64_t node_end, int64_t cell_begin, int64_t cell_end,
                                      pbng_mesh_slice *s)
{
  const int per_cell = pbng_grid_elements_per_cell(&g->el);
  int64_t m[3], ncells, *rows, box_nodes, box_elems, box_cells;
  double lo[3], hi[3];
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
  box_counts(g, &box_nodes, &box_elems, &box_cells);
  s->etype = pbng_element_type_get(g->el.kind);
  s->nen = s->etype->nodes;
  s->node_begin = node_begin, s->node_end = node_end;
  s->elem_begin = per_cell * cell_begin, s->elem_end = per_cell * cell_end;
  PetscCall(PetscStrncpy(s->source, g->source, sizeof(s->source)));
  PetscCall(PetscMalloc1(3 * (node_end - node_begin) + 1, &s->X));
  for (int64_t i = node_begin; i < node_end; ++i) {
    const int b = (int)(i / box_nodes);
    grid_box(g, b, lo, hi);
    pbng_grid_point(m, lo, hi, i - b * box_nodes, &s->X[3 * (i - node_begin)]);
  }
  PetscCall(PetscMalloc1((s->elem_end - s->elem_begin) * s->nen + 1, &s->elems));
  PetscCall(PetscMalloc1((int64_t)per_cell * s->nen, &rows));
  for (int64_t c = cell_begin; c < cell_end; ++c) {
    const int64_t first = (c - cell_begin) * per_cell * s->nen, b = c / box_cells; /* box b's nodes after the boxes' before */
    const int n = pbng_grid_cell_elements(&g->el, g->n, c - b * box_cells, rows);
    for (int64_t k = 0; k < (int64_t)n * s->nen; ++k) s->elems[first + k] = (int32_t)(rows[k] + b * box_nodes);
  }
  PetscCall(PetscFree(rows));
  if (g->stacked) PetscCall(stacked_sets(g, s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_grid_slice_of_process(const pbng_grid *g, int rank, int size, pbng_mesh_slice *s)
{
  int64_t nnodes, nelems, ncells;

  PetscFunctionBeginUser;
  pbng_grid_counts(g, &nnodes, &nelems, &ncells);
  PetscCall(pbng_grid_slice_create(g, nnodes * rank / size, nnodes * (rank + 1) / size, ncells * rank / size, ncells * (rank + 1) / size, s));
  const int64_t nweak = g->stacked && g->bind_k > 0 ? g->n[0] * g->n[0] : 0;
  PetscErrorCode ierr = nweak ? stacked_bindings(g, nweak * rank / size, nweak * (rank + 1) / size, s) : 0;
  if (ierr) PetscCall(pbng_mesh_slice_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
