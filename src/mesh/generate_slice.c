#include "mesh/generate_slice.h"
#include <stdio.h>
#include <string.h>

enum { MAX_ORDER = 4 }; /* of the generated kinds (tet20: 3) */

/* Which points of a grid's refined point grid (order p: m[d] = p (n[d] - 1) + 1 points per axis) some element
 * uses. Point (x, y, z) lies at offsets (x mod p, y mod p, z mod p) in the cell (x / p, y / p, z / p), a virtual
 * one past the last on the far faces; whether it is used depends on those offsets and on the cell's parity alone
 * (the five-tetrahedron split alternates with it, the others are the same in every cell): the splits tile space
 * conformingly, so every cell around a point uses it alike. Corners and hexahedra's points are always used;
 * with five per cell tet10 leaves the cell centres unused, tet20 half the interior points (six per cell: none). */
typedef struct {
  int p;
  int64_t m[3];
  unsigned char used[2][MAX_ORDER * MAX_ORDER * MAX_ORDER]; /* [parity][a + p (b + p c)], offsets a, b, c < p */
} used_points;

/* Point (x, y, z)'s offsets in its cell as an index a + p (b + p c) of the pattern, and the cell's parity. */
static int pattern_slot(int p, int64_t x, int64_t y, int64_t z, int *parity)
{
  *parity = (int)((x / p + y / p + z / p) % 2);
  return (int)(x % p + p * (y % p + p * (z % p)));
}

/* Whether each point of row (y, z) is used: used[x] for x < m0 (offsets and parity followed along the row). */
static void row_pattern(const used_points *u, int64_t y, int64_t z, unsigned char *used)
{
  int parity, a = 0;
  const int slot = pattern_slot(u->p, 0, y, z, &parity);
  for (int64_t x = 0; x < u->m[0]; ++x) {
    used[x] = u->used[parity][slot + a];
    if (++a == u->p) a = 0, parity ^= 1;
  }
}

int pbng_grid_slice_supported(const pbng_grid_elements *el, char *why, size_t len)
{
  const pbng_element_type *t = pbng_element_type_get(el->kind);
  why[0] = 0;
  if (t->shape != PBNG_SHAPE_TETRAHEDRON && t->shape != PBNG_SHAPE_HEXAHEDRON) snprintf(why, len, "%s elements are not generated", t->name);
  else if (t->order > MAX_ORDER) snprintf(why, len, "%s grids: order %d (slices of orders up to %d are made)", t->name, t->order, MAX_ORDER);
  return !why[0];
}

/* The pattern read off the elements of the two cells of a 2 x 1 x 1 grid (parities 0 and 1); m the grid's. Kinds
 * without slices (not generated) count as using every point: their slices are refused. */
static void used_points_init(const pbng_grid *g, used_points *u)
{
  const int64_t sample[3] = {3, 2, 2};
  const int nen = pbng_element_type_get(g->el.kind)->nodes;
  int64_t nodes[6 * PBNG_MAX_ELEMENT_NODES], ms[3];
  char why[128];

  memset(u, 0, sizeof(*u));
  u->p = pbng_element_type_get(g->el.kind)->order;
  pbng_grid_fine_dims(g->n, &g->el, u->m);
  if (!pbng_grid_slice_supported(&g->el, why, sizeof(why))) { /* every point, whatever the order: one offset */
    u->p = 1, u->used[0][0] = u->used[1][0] = 1;
    return;
  }
  pbng_grid_fine_dims(sample, &g->el, ms);
  for (int64_t cell = 0; cell < 2; ++cell)
    for (int k = 0, n = pbng_grid_cell_elements(&g->el, sample, cell, nodes) * nen; k < n; ++k) {
      int parity;
      const int slot = pattern_slot(u->p, nodes[k] % ms[0], (nodes[k] / ms[0]) % ms[1], nodes[k] / (ms[0] * ms[1]), &parity);
      u->used[parity][slot] = 1;
    }
}

/* How many of the coordinates 0 .. L - 1 lie at offset l in a cell of parity b (coordinate p c + l, c % 2 = b). */
static int64_t coordinates_at(int64_t L, int p, int l, int b)
{
  const int64_t cells = L > l ? (L - l + p - 1) / p : 0; /* c = 0 .. cells - 1 */
  return b == 0 ? (cells + 1) / 2 : cells / 2;
}

/* The used points of the box lo[d] <= coordinate d < hi[d]: per offset and parity of the cell along each axis, the
 * points so placed (a product of counts per axis) if the pattern uses them. */
static int64_t used_in_box(const used_points *u, const int64_t lo[3], const int64_t hi[3])
{
  const int p = u->p;
  int64_t count[3][MAX_ORDER][2], total = 0;
  for (int d = 0; d < 3; ++d)
    for (int l = 0; l < p; ++l)
      for (int b = 0; b < 2; ++b) count[d][l][b] = coordinates_at(hi[d], p, l, b) - coordinates_at(lo[d], p, l, b);
  for (int c = 0; c < p; ++c)
    for (int bz = 0; bz < 2; ++bz)
      for (int b = 0; b < p; ++b)
        for (int by = 0; by < 2; ++by)
          for (int a = 0; a < p; ++a)
            for (int bx = 0; bx < 2; ++bx)
              if (u->used[(bx + by + bz) % 2][a + p * (b + p * c)]) total += count[0][a][bx] * count[1][b][by] * count[2][c][bz];
  return total;
}

/* The node id point g would have: the used points before it in grid order (earlier planes, earlier rows of its
 * plane, earlier points of its row). g = m0 m1 m2: the node count. */
static int64_t used_before(const used_points *u, int64_t g)
{
  const int64_t x = g % u->m[0], y = (g / u->m[0]) % u->m[1], z = g / (u->m[0] * u->m[1]);
  const int64_t zero[3] = {0, 0, 0}, planes[3] = {u->m[0], u->m[1], z};
  const int64_t row0[3] = {0, 0, z}, rows[3] = {u->m[0], y, z + 1};
  const int64_t point0[3] = {0, y, z}, points[3] = {x, y + 1, z + 1};
  return used_in_box(u, zero, planes) + used_in_box(u, row0, rows) + used_in_box(u, point0, points);
}

/* The point of node id (0 <= id < the node count): the first point with id + 1 used points up to it. */
static int64_t point_of_node(const used_points *u, int64_t id)
{
  int64_t lo = 0, hi = u->m[0] * u->m[1] * u->m[2] - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (used_before(u, mid + 1) > id) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* The node ids of the p + 1 planes z0 .. z0 + p (a layer of cells' points; -1 where unused) into id; used[m0]: room
 * for a row's pattern. */
static void number_planes(const used_points *u, int64_t z0, unsigned char *used, int32_t *id)
{
  int64_t next = used_before(u, z0 * u->m[0] * u->m[1]), k = 0;
  for (int64_t z = z0; z <= z0 + u->p; ++z)
    for (int64_t y = 0; y < u->m[1]; ++y) {
      row_pattern(u, y, z, used);
      for (int64_t x = 0; x < u->m[0]; ++x) id[k++] = used[x] ? (int32_t)next++ : -1;
    }
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
  used_points u;
  const int64_t zero[3] = {0, 0, 0};
  used_points_init(g, &u);
  *ncells = (g->n[0] - 1) * (g->n[1] - 1) * (g->n[2] - 1);
  *nelems = pbng_grid_elements_per_cell(&g->el) * *ncells;
  *nnodes = used_in_box(&u, zero, u.m);
}

/* Positions of one box's nodes begin .. end - 1 (its own numbering) into X: the used points from begin's on, in grid
 * order, row by row, the box spanning lo .. hi. */
static PetscErrorCode box_positions(const used_points *u, const double lo[3], const double hi[3], int64_t begin, int64_t end, double *X)
{
  const int64_t row = u->m[0];
  int64_t point = begin < end ? point_of_node(u, begin) : 0, i = begin;
  unsigned char *used;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(row, &used));
  for (int64_t r = point / row; i < end; ++r) {
    row_pattern(u, r % u->m[1], r / u->m[1], used);
    for (int64_t x = r == point / row ? point % row : 0; x < row && i < end; ++x)
      if (used[x]) pbng_grid_point(u->m, lo, hi, r * row + x, &X[3 * (i++ - begin)]);
  }
  PetscCall(PetscFree(used));
  PetscFunctionReturn(0);
}

/* The slice's node positions, box by box (box b's nodes after the boxes' before it). */
static PetscErrorCode slice_positions(const pbng_grid *g, const used_points *u, int64_t box_nodes, pbng_mesh_slice *s)
{
  PetscFunctionBeginUser;
  for (int b = 0; b < grid_boxes(g); ++b) {
    const int64_t begin = PetscMax(s->node_begin, b * box_nodes), end = PetscMin(s->node_end, (b + 1) * box_nodes);
    double lo[3], hi[3];
    if (begin >= end) continue;
    grid_box(g, b, lo, hi);
    PetscCall(box_positions(u, lo, hi, begin - b * box_nodes, end - b * box_nodes, &s->X[3 * (begin - s->node_begin)]));
  }
  PetscFunctionReturn(0);
}

/* The slice's element rows, cell by cell: the cells' points as node ids, numbered a layer of cells of a box at a time
 * (box b's cells and nodes after the boxes' before it). */
static PetscErrorCode slice_elements(const pbng_grid *g, const used_points *u, int64_t box_nodes, int64_t box_cells, int64_t cell_begin,
                                     int64_t cell_end, pbng_mesh_slice *s)
{
  const int per_cell = pbng_grid_elements_per_cell(&g->el);
  const int64_t plane = u->m[0] * u->m[1], layer = (g->n[0] - 1) * (g->n[1] - 1);
  int64_t *rows, z0 = -1, numbered_box = -1;
  int32_t *id;
  unsigned char *used;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3((int64_t)per_cell * s->nen, &rows, (u->p + 1) * plane, &id, u->m[0], &used));
  for (int64_t c = cell_begin; c < cell_end; ++c) {
    const int64_t first = (c - cell_begin) * per_cell * s->nen, b = c / box_cells, cell = c - b * box_cells;
    if (u->p * (cell / layer) != z0 || b != numbered_box) number_planes(u, z0 = u->p * (cell / layer), used, id), numbered_box = b;
    const int n = pbng_grid_cell_elements(&g->el, g->n, cell, rows);
    for (int64_t k = 0; k < (int64_t)n * s->nen; ++k) s->elems[first + k] = (int32_t)(id[rows[k] - z0 * plane] + b * box_nodes);
  }
  PetscCall(PetscFree3(rows, id, used));
  PetscFunctionReturn(0);
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
  int64_t ncells, box_nodes, box_elems, box_cells;
  used_points u;
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
  used_points_init(g, &u);
  box_counts(g, &box_nodes, &box_elems, &box_cells);
  s->etype = pbng_element_type_get(g->el.kind);
  s->nen = s->etype->nodes;
  s->node_begin = node_begin, s->node_end = node_end;
  s->elem_begin = per_cell * cell_begin, s->elem_end = per_cell * cell_end;
  PetscCall(PetscStrncpy(s->source, g->source, sizeof(s->source)));
  PetscCall(PetscMalloc1(3 * (node_end - node_begin) + 1, &s->X));
  PetscCall(slice_positions(g, &u, box_nodes, s));
  PetscCall(PetscMalloc1((s->elem_end - s->elem_begin) * s->nen + 1, &s->elems));
  PetscCall(slice_elements(g, &u, box_nodes, box_cells, cell_begin, cell_end, s));
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
